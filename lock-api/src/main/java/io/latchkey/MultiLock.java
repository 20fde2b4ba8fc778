package io.latchkey;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Several locks taken together: all of them or none, within one wait. From
 * {@link LockClient#multiLock(String...)}; the locks are the client's ordinary locks of those names, so
 * a multi-lock on {@code {a, b}} excludes, and is excluded by, every other holder of {@code a} or of
 * {@code b}, whether it took one name or several.
 *
 * <p>Order: the names are taken one after another in one global order, that of
 * {@link String#compareTo}, whatever order the caller gave them in. Two holders that ask for
 * {@code {a, b}} and {@code {b, a}} therefore both wait for {@code a} first, and no set of multi-locks
 * can wait for each other in a circle.
 *
 * <p>All or nothing: if a name stays held by someone else until the wait runs out, if the backend fails,
 * or if the thread is interrupted, every lock already taken by the call is released before it returns
 * (or throws), and the call holds nothing.
 *
 * <p>Bounds: one wait covers the whole call. Each name is tried within what is left of it, and a name
 * reached after the wait ran out is still tried once without waiting, as {@code tryLock(Duration.ZERO)}
 * does; an unreachable backend fails the call within the wait plus one {@code timeout} per name taken.
 *
 * <p>Reentrancy, per thread, as for each lock: a thread that holds {@code a} and takes the multi-lock
 * {@code {a, b}} nests on its lease of {@code a}. Thread-safe; equal handles need not be the same object.
 */
public interface MultiLock {

    /** The names, in the order they are taken: sorted by {@link String#compareTo}, each once. */
    List<String> names();

    /** Takes every lock at once if all are free; see {@link #tryLock(Duration)}. */
    default Optional<MultiLease> tryLock() throws InterruptedException {
        return tryLock(Duration.ZERO);
    }

    /**
     * Takes every lock, waiting at most {@code wait} in all.
     *
     * @return a lease on every name; empty if one of them stayed held by someone else until the wait ran
     *     out, in which case none is held
     * @throws LockBackendUnavailableException if the backend cannot be reached; none is held
     * @throws LockException if a lock the call already held was lost while it waited for the next; none
     *     is held
     * @throws InterruptedException if interrupted while waiting; none is held
     * @throws IllegalArgumentException if {@code wait} is negative
     */
    Optional<MultiLease> tryLock(Duration wait) throws InterruptedException;

    /**
     * Takes every lock, waiting at most {@code wait} in all, and fails if one of them stayed held.
     *
     * @throws LockNotAcquiredException if a name stayed held by someone else; none is held
     */
    default MultiLease lock(Duration wait) throws InterruptedException {
        return tryLock(wait).orElseThrow(() -> new LockNotAcquiredException(names().toString(), "multi-lock "
                + names() + " was not acquired: a lock of it is still held by another holder after waiting " + wait
                + "; wait longer or use tryLock to treat a held lock as a normal outcome"));
    }

    /** Whether the current thread holds every one of the locks, each valid. */
    boolean isHeldByCurrentThread();
}
