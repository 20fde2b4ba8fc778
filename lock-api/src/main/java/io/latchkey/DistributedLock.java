package io.latchkey;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A named lock shared by every client of the same backend and namespace.
 *
 * <p>Not getting the lock is a value ({@link Optional#empty()}), never an exception. A lease is
 * reentrant per thread: the thread that holds a lease of this lock gets a nested lease at once, and
 * the lock is released when the last nested lease closes. Other threads of the same process wait
 * like any other contender, and wait locally, so that one process sends one contender at a time to
 * the backend.
 *
 * <p>Bounds: {@code tryLock(wait)} returns within {@code wait} plus one backend round trip (the
 * {@code timeout} option). A backend that cannot be reached gives a {@link LockBackendUnavailableException}
 * within the same bound, never a hang and never an empty result.
 *
 * <p>Thread-safety: instances are immutable and thread-safe; they are cheap handles on the client.
 */
public interface DistributedLock {

    /** The name this lock was taken with. */
    String name();

    /**
     * Takes the lock if it is free now, without waiting for a holder to release it.
     *
     * @return the lease, or empty if another holder has the lock
     * @throws LockLostException if the calling thread holds a lease of this lock that was lost
     */
    default Optional<Lease> tryLock() throws InterruptedException {
        return tryLock(Duration.ZERO);
    }

    /**
     * Takes the lock, waiting at most {@code wait} for it to become free.
     *
     * @return the lease, or empty if the lock stayed held for the whole wait
     * @throws IllegalArgumentException if {@code wait} is negative
     * @throws LockLostException if the calling thread holds a lease of this lock that was lost
     * @throws LockBackendUnavailableException if the backend cannot be reached within the bound
     * @throws InterruptedException if the thread is interrupted while waiting; nothing is left held
     */
    Optional<Lease> tryLock(Duration wait) throws InterruptedException;

    /**
     * Takes the lock, waiting at most {@code wait}, and fails if it stays held.
     *
     * @throws LockNotAcquiredException if the lock stayed held for the whole wait
     * @see #tryLock(Duration)
     */
    default Lease lock(Duration wait) throws InterruptedException {
        return tryLock(wait).orElseThrow(() -> new LockNotAcquiredException(name(), wait));
    }

    /**
     * Takes the lock on a thread of the client, waiting at most {@code wait}. A lease acquired this way
     * belongs to no thread: any thread may close it, and no thread gets a nested lease from it.
     * Cancelling the future before it completes releases the lock if it was acquired meanwhile.
     */
    CompletableFuture<Optional<Lease>> tryLockAsync(Duration wait);

    /**
     * Takes the lock like {@link #tryLock(Duration)}, waiting {@link LockRequest#waitTime()}, and applies
     * the request's {@code atMost} and {@code atLeast} bounds to a new grant.
     *
     * @throws IllegalArgumentException if the request names a slot: slots apply to
     *     {@link #runLocked}/{@link #callLocked} only
     * @see #tryLock(Duration)
     */
    Optional<Lease> tryLock(LockRequest request) throws InterruptedException;

    /**
     * Runs {@code task} under the lock if it can be taken within {@code request}'s wait, and releases
     * the lock afterwards (honouring {@code atLeast}).
     *
     * <p>The task runs only with a valid lease, on the calling thread, and gets the lease to read its
     * fencing token and validity. If the lease is lost while the task runs, the calling thread is
     * interrupted (unless {@link LockRequest#interruptOnLoss()} is off), and the result is
     * {@link LockResult.Outcome#LOST} with whatever the task returned or threw; an interrupt caused
     * that way is cleared before this method returns. An exception of the task is caught and
     * reported as {@link LockResult.Outcome#FAILED}; errors propagate.
     *
     * <p>With a {@linkplain LockRequest#slot() slot}, the task runs at most once per slot across every
     * client of the lock, without relying on synchronized clocks: the slot is a name for the run (for a
     * cron job its scheduled fire time), not a reading of a clock. After acquiring, the holder reads
     * the last completed slot the backend records with the lock; if the request's slot is at or before
     * it, the task is skipped ({@link LockResult.Outcome#SLOT_DONE}) and the lock released at once.
     * Otherwise the task runs and, if it completed (or threw and {@link LockRequest#markSlotOnFailure()}
     * is on), its slot is recorded, only while the lease is still valid and guarded by its fencing
     * token in the backend. A task that ran but whose slot could not be recorded (the lease was lost)
     * is reported as {@link LockResult.Outcome#LOST}: another node may run the slot again.
     *
     * @throws LockBackendUnavailableException if the backend cannot be reached within the bound
     * @throws LockException if the request names a slot and the backend does not record slots
     * @throws InterruptedException if interrupted while waiting for the lock; the task did not run
     */
    <T> LockResult<T> callLocked(LockRequest request, LockCallable<T> task) throws InterruptedException;

    /** {@link #callLocked} for a task without a value. */
    default LockResult<Void> runLocked(LockRequest request, LockTask task) throws InterruptedException {
        return callLocked(request, lease -> {
            task.run(lease);
            return null;
        });
    }

    /** Runs {@code task} under the lock, waiting at most {@code wait} for it; see {@link #callLocked}. */
    default LockResult<Void> runLocked(Duration wait, LockTask task) throws InterruptedException {
        return runLocked(LockRequest.waiting(wait), task);
    }

    /** Computes {@code task} under the lock, waiting at most {@code wait} for it; see {@link #callLocked}. */
    default <T> LockResult<T> callLocked(Duration wait, LockCallable<T> task) throws InterruptedException {
        return callLocked(LockRequest.waiting(wait), task);
    }

    /**
     * Whether the calling thread holds a valid lease of this lock through this client. Local
     * knowledge: nothing is sent to the backend.
     */
    boolean isHeldByCurrentThread();

    /**
     * How many open leases of this lock the calling thread holds through this client (nested leases
     * counted, a lost one too until it is closed); zero if none. A lease taken with
     * {@link #tryLockAsync} belongs to no thread and is not counted.
     */
    int holdCount();

    /**
     * Whether this client holds a valid lease of this lock, on any thread or asynchronously. Local
     * knowledge: nothing is sent to the backend.
     */
    boolean isHeldByThisClient();

    /**
     * This lock as a {@link java.util.concurrent.locks.Lock}, for a library that takes one.
     *
     * <p>The rules, those of {@link java.util.concurrent.locks.ReentrantLock} where a distributed lock
     * allows them:
     * <ul>
     *   <li>Each successful lock call takes a lease on the calling thread (reentrant, as the lock is) and
     *       {@code unlock()} closes the thread's latest one: only the thread that locked may unlock, as
     *       {@code ReentrantLock} requires; any other thread, or one more unlock than locks, is an
     *       {@link IllegalMonitorStateException}. Views of the same lock share the thread's leases.</li>
     *   <li>{@code lock()} waits until granted, a day's wait at a time, and keeps waiting through an
     *       interrupt, which it restores before it returns; {@code lockInterruptibly()} and
     *       {@code tryLock(long, TimeUnit)} stop at one. {@code tryLock()} does not wait, and an interrupt
     *       while it asks the backend is a {@code false}, the interrupt restored.</li>
     *   <li>A backend that cannot be reached is a {@link LockBackendUnavailableException} from every lock
     *       call, within the wait plus {@code timeout}: it is not taken for a lock that is held.</li>
     *   <li>A {@code Lock} has no loss signal. {@code unlock()} of a lease that was lost or expired while
     *       held closes it and then throws an {@link IllegalMonitorStateException} that says so (as
     *       Redisson's {@code unlock} of an expired lock does): what ran under it may have overlapped
     *       another holder. Code that can, should use this interface itself, with
     *       {@link Lease#lost()} and the fencing token.</li>
     *   <li>{@code newCondition()} is refused: a condition's wait and signal have no meaning across
     *       processes here.</li>
     * </ul>
     */
    default java.util.concurrent.locks.Lock asLock() {
        return new LockView(this);
    }

    /**
     * Asks the backend who holds this lock now, by any client: the holder's identity (see
     * {@link Holder}), the grant's fencing token and how long the backend keeps it for a silent holder.
     * One read; it changes nothing for a holder or a waiter and creates nothing on the backend.
     *
     * @throws LockBackendUnavailableException if the backend cannot be reached within {@code timeout}
     * @throws UnsupportedOperationException on a mode of a {@link DistributedReadWriteLock}, or on a
     *     backend that cannot read who holds a lock
     * @throws InterruptedException if interrupted while waiting for the backend's answer
     */
    LockState inspect() throws InterruptedException;

    /**
     * Ends the current grant of this lock on the backend, whoever holds it (Redisson's
     * {@code forceUnlock}): an administrator's tool for a holder that hangs while it still renews. The
     * lock is free at once; the holder learns it as a loss at its next check of the grant, within its
     * lease at the latest (its {@link Lease#lost()} completes with a {@link LockLostException} that says
     * the grant was ended on the backend); the next grant's fencing token is higher than the ended one's, so that a resource that
     * checks tokens refuses the old holder. Until the holder learns it, it may still believe it holds:
     * only fencing protects a resource in that time, as with any expiry.
     *
     * @return the grant it ended, as {@link #inspect()} read it just before; free if nobody held the lock
     * @throws LockBackendUnavailableException if the backend cannot be reached within {@code timeout}
     * @throws UnsupportedOperationException on a mode of a {@link DistributedReadWriteLock}, or on a
     *     backend that cannot end another client's grant; the message says why
     * @throws InterruptedException if interrupted while waiting for the backend's answer
     */
    LockState forceRelease() throws InterruptedException;
}
