package io.latchkey;

import java.time.Duration;
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
}
