package io.latchkey.spi;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * A lock held in the backend, owned by this handle. Thread-safe.
 *
 * <p>Two optional capabilities serve scheduled jobs; a backend that does not implement them keeps
 * working, with {@code atLeast} kept by the client and slots refused:
 * <ul>
 *   <li>{@link #releaseAfter}: hand {@code atLeast} over to the backend's own expiry;</li>
 *   <li>{@link #recordsSlots()}, {@link #lastCompletedSlot()}, {@link #recordCompletedSlot}: the last
 *       completed schedule slot, stored with the lock in the backend.</li>
 * </ul>
 */
public interface BackendLease {

    /** The fencing token of this grant: strictly greater than that of every earlier grant of the lock name. */
    long fencingToken();

    /**
     * Stops renewal and releases the lock in the backend if this handle still owns it; never releases
     * a lock now owned by someone else. Called at most once by the shared layer, from any thread.
     *
     * @throws io.latchkey.LockBackendUnavailableException if the backend could not be reached; the lock
     *     then expires on its own
     */
    void release();

    /**
     * Instead of {@link #release()}: stops renewal and lets the backend's own expiry free the lock no
     * earlier than {@code remaining} from now (measured from before the request is sent) and as soon
     * after as the backend allows, so that the lock stays taken for that long even if this process
     * exits. Called at most once, instead of {@code release()}, by the shared layer.
     *
     * @return true if the backend took over; false (the default) if it cannot, and the shared layer
     *     then keeps the lock itself and calls {@link #release()} once {@code remaining} has passed
     * @throws io.latchkey.LockBackendUnavailableException if the backend could not be reached; the lock
     *     then expires on its own
     */
    default boolean releaseAfter(Duration remaining) {
        return false;
    }

    /** Whether this backend stores the last completed schedule slot with the lock. */
    default boolean recordsSlots() {
        return false;
    }

    /**
     * Reads the last completed slot recorded with the lock, by any holder; empty if none. Called only
     * while this handle holds the lock.
     *
     * @throws UnsupportedOperationException if {@link #recordsSlots()} is false
     * @throws io.latchkey.LockBackendUnavailableException if the backend could not be reached
     */
    default Optional<Instant> lastCompletedSlot() {
        throw new UnsupportedOperationException("this backend does not record schedule slots");
    }

    /**
     * Records {@code slot} as the last completed slot of the lock, only if this handle still holds the
     * lock: the write is guarded by {@link #fencingToken()} in the backend, so that a holder that lost
     * the lock (paused past its lease, say) cannot overwrite the record of a later holder.
     *
     * @throws io.latchkey.LockLostException if the backend refused the write because this handle no
     *     longer holds the lock
     * @throws UnsupportedOperationException if {@link #recordsSlots()} is false
     * @throws io.latchkey.LockBackendUnavailableException if the backend could not be reached
     */
    default void recordCompletedSlot(Instant slot) {
        throw new UnsupportedOperationException("this backend does not record schedule slots");
    }
}
