package io.latchkey;

import java.time.Duration;
import java.time.Instant;

/**
 * Receives the events of the locks of one {@link LockClient}: acquisitions, failed attempts,
 * releases, losses and backend failures. Register it with {@link LockOptions.Builder#listener} or
 * {@link LockClient#addListener}; every method has an empty default, so a listener overrides only
 * what it needs.
 *
 * <p>Events describe grants of the backend lock: a nested lease (the holding thread taking the lock
 * again) is neither acquired nor released. Every grant that was {@link #acquired} ends with exactly
 * one {@link #released}, also after it was {@link #lost} (when the application closes the lost lease
 * or the client is closed).
 *
 * <p>Threading: events are delivered in order on the client's one event thread, never on a thread of
 * the lock machinery, so a slow listener delays other listeners but never a lock. A listener that
 * throws is logged and does not affect the lock or the other listeners. If listeners fall so far
 * behind that the client's bounded event queue fills up, further events are dropped and a warning is
 * logged. Implementations must be thread-safe if they are shared between clients.
 */
public interface LockListener {

    /**
     * The backend granted the lock.
     *
     * @param waitTime from the start of the call to the grant
     * @param fencingToken the grant's token
     */
    default void acquired(String lockName, Duration waitTime, long fencingToken) {
    }

    /** The lock stayed held by someone else for the whole wait. */
    default void notAcquired(String lockName, Duration waitTime) {
    }

    /**
     * An attempt to take the lock failed with an error (the backend unreachable, or refusing the
     * request). {@link #backendUnavailable} follows if the backend was unreachable.
     */
    default void acquireFailed(String lockName, Duration waitTime, LockException exception) {
    }

    /**
     * The grant ended: its last lease was closed, or the client was closed.
     *
     * @param holdTime from the grant to the close
     */
    default void released(String lockName, Duration holdTime) {
    }

    /** The grant was lost; {@code reason} says why (expiry, revocation, its {@code atMost} bound...). */
    default void lost(String lockName, LockLostException reason) {
    }

    /** The backend could not be reached, while acquiring or releasing. */
    default void backendUnavailable(String lockName, LockBackendUnavailableException exception) {
    }

    /**
     * A task for schedule slot {@code slot} was skipped because the backend records {@code recordedSlot}
     * (at or after it) as completed.
     */
    default void slotSkipped(String lockName, Instant slot, Instant recordedSlot) {
    }
}
