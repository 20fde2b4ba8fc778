package io.latchkey;

/**
 * Proof of holding one permit of a {@link DistributedSemaphore}, until it is closed or lost: a
 * {@link Lease} with the same validity deadline, loss signal and release from any thread, plus the
 * permit slot it holds.
 *
 * <p>A semaphore of {@code N} permits has {@code N} slots, numbered {@code 0} to {@code N - 1}; each
 * valid lease holds a different one, and a released or lost slot is given to the next holder.
 * {@link #fencingToken()} is counted <em>per slot</em>: it is strictly greater than the token of
 * every earlier holder of the same slot of the same semaphore name. Why per slot and not per name: a
 * resource shared by the {@code N} holders cannot keep one highest token, since {@code N} valid
 * holders with different tokens write to it at once and the lowest would be refused while still
 * valid; a holder that keeps its permit for hours while the other slots change hands many times must
 * keep writing. Per slot, the rule of the lock holds again: the resource keeps the highest token of
 * each slot ({@link #slot()}) and refuses a write whose token is lower than that of its slot, which
 * refuses exactly the holders whose slot passed to someone else. Tokens of different slots are not
 * comparable (a backend may happen to draw them from one counter, but nothing promises it).
 *
 * <p>{@link #lockName()} is the semaphore's name. Thread-safety: as {@link Lease}.
 */
public interface SemaphoreLease extends Lease {

    /** The slot this lease holds, from {@code 0} to {@link #permits()}{@code  - 1}. */
    int slot();

    /** The number of permits of the semaphore. */
    int permits();

    /**
     * A number strictly greater than the token of every earlier holder of the same {@link #slot()} of
     * this semaphore, across clients, client restarts and the backend's own cleanup.
     */
    @Override
    long fencingToken();
}
