package io.latchkey;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A semaphore by name with a fixed number of permits, shared by every client of the backend: at most
 * {@link #permits()} valid {@link SemaphoreLease leases} of one name at any instant, across threads,
 * clients and processes. Obtained from {@link LockClient#semaphore(String, int)}.
 *
 * <pre>{@code
 * DistributedSemaphore warehouse = client.semaphore("spark:warehouse", 3);   // at most three jobs at once
 * Optional<SemaphoreLease> maybe = warehouse.tryAcquire(Duration.ofSeconds(5));   // empty: three run already
 * if (maybe.isPresent()) {
 *     try (SemaphoreLease lease = maybe.get()) {
 *         runJob(lease.slot(), lease.fencingToken());
 *     }
 * }
 * }</pre>
 *
 * <p>Each lease keeps the promises of a lock's lease: a conservative validity deadline on this
 * process's monotonic clock, {@link Lease#lost()} completed and logged if the permit may have been
 * given to someone else, release from any thread, {@code close()} idempotent; a holder killed with
 * {@code kill -9} frees its permit within {@code lease}. Fencing tokens are per permit slot: see
 * {@link SemaphoreLease} for why.
 *
 * <p>No reentrancy: unlike {@link DistributedLock}, every {@code tryAcquire} takes another permit,
 * from whatever thread, as {@link java.util.concurrent.Semaphore} does. A thread that calls it twice
 * holds two permits (or waits for the second), and each lease releases its own. A semaphore is
 * counted, not owned, so nesting would have no meaning a user could rely on.
 *
 * <p>All holders must agree on the number of permits. A different number for a name that this client
 * is using, or that the backend knows with another number, is an {@link IllegalArgumentException}
 * naming both numbers; the backend knows a semaphore's number at least while any permit of it is held.
 *
 * <p>Names follow the rule of lock names (any 1 to 255 characters without control characters), and a
 * semaphore never collides with a lock of the same name: they live apart in the backend.
 *
 * <p>{@link LockListener}s hear of permits through the methods that take a {@link LockListener.Target}
 * of kind {@link LockListener.Target.Kind#PERMIT PERMIT}: acquired (with the slot), not acquired,
 * failed, released and lost, as for locks; a listener that overrides only the methods by name sees
 * locks alone. Thread-safe; cheap to create.
 */
public interface DistributedSemaphore {

    /** The name of the semaphore. */
    String name();

    /** The number of permits, the same for every holder. */
    int permits();

    /**
     * Takes a permit if one is free at once, without waiting for a holder to release one.
     *
     * @return the lease, or empty if every permit is held
     * @throws LockBackendUnavailableException if the backend cannot be reached; within {@code timeout}
     * @throws IllegalArgumentException if the backend knows this semaphore with another number of permits
     * @throws IllegalStateException if the client is closed
     * @throws InterruptedException if interrupted while waiting; nothing is left held or queued
     */
    default Optional<SemaphoreLease> tryAcquire() throws InterruptedException {
        return tryAcquire(Duration.ZERO);
    }

    /**
     * Takes a permit, waiting at most {@code wait} for one to be released.
     *
     * @return the lease, or empty if every permit stayed held; within {@code wait} plus {@code timeout}
     * @throws LockBackendUnavailableException if the backend cannot be reached; within {@code wait} plus {@code timeout}
     * @throws IllegalArgumentException if {@code wait} is negative, or the backend knows this semaphore
     *     with another number of permits
     * @throws IllegalStateException if the client is closed
     * @throws InterruptedException if interrupted while waiting; nothing is left held or queued
     */
    Optional<SemaphoreLease> tryAcquire(Duration wait) throws InterruptedException;

    /**
     * Takes a permit, waiting at most {@code wait}.
     *
     * @throws LockNotAcquiredException if every permit stayed held for the whole wait
     * @throws LockBackendUnavailableException if the backend cannot be reached
     * @throws InterruptedException if interrupted while waiting; nothing is left held or queued
     */
    default SemaphoreLease acquire(Duration wait) throws InterruptedException {
        return tryAcquire(wait).orElseThrow(() -> new LockNotAcquiredException(name(), "every one of the " + permits()
                + " permits of semaphore '" + name() + "' is still held after waiting " + wait
                + "; wait longer or use tryAcquire to treat a full semaphore as a normal outcome"));
    }

    /**
     * What the backend records of each permit slot now, as any client reads it: one {@link LockState} per
     * slot {@code 0..permits()-1}, in slot order, named by the semaphore, each free or held by the
     * {@link Holder} whose permit it is, with the slot's fencing token ({@link SemaphoreLease#fencingToken()}),
     * how long the backend keeps it for a silent holder and since when it is held, where the backend tells
     * them. Waiters are not counted per slot ({@link LockState#waiters()} is empty): they wait for any slot.
     * Read-only: it takes no permit, creates nothing on the backend and does not change the number of permits
     * the backend knows. A snapshot, read slot by slot where the backend has no one read of them all.
     *
     * @return one state per slot, {@link #permits()} of them
     * @throws LockBackendUnavailableException if the backend cannot be reached; within {@code timeout}
     * @throws IllegalArgumentException if the backend knows this semaphore with another number of permits
     * @throws UnsupportedOperationException if the backend cannot read a semaphore's slots
     * @throws IllegalStateException if the client is closed
     * @throws InterruptedException if interrupted while reading
     */
    List<LockState> inspect() throws InterruptedException;
}
