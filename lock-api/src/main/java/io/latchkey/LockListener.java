package io.latchkey;

import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;

/**
 * Receives the events of the locks, semaphores and elections of one {@link LockClient}: acquisitions,
 * failed attempts, releases, losses and backend failures, and the terms its candidates win and end.
 * Register it with {@link LockOptions.Builder#listener} or {@link LockClient#addListener}; every method
 * has a default, so a listener overrides only what it needs.
 *
 * <p>Each event comes in two forms. The client calls the form that takes a {@link Target}, which
 * says what was asked for: a lock, or a permit of a semaphore (with its slot and number of permits).
 * The defaults of that form pass a <em>lock's</em> events on to the form that takes the lock's name,
 * and drop a permit's; so a listener written for locks alone overrides the methods by name and sees
 * locks only, as it always did, and a listener that wants permits too overrides the methods that take
 * a {@link Target}. {@link #slotSkipped} concerns locks only and has one form.
 *
 * <p>The events of an {@link Election} ({@link #elected}, {@link #revoked}) come from the candidacies
 * of this client, besides the events of the election's lock, which is a lock like any other. They are
 * told when the candidate's own {@link ElectionListener} is told and alternate the same way, per
 * candidacy. For one term, the lock's {@code acquired} comes before {@code elected}, and {@code revoked}
 * before the lock's {@code released} (unless a closing client stops waiting for a candidate whose
 * listener does not return).
 *
 * <p>Events describe grants of the backend lock or permit: a nested lease (the holding thread taking
 * the lock again) is neither acquired nor released. Every grant that was {@link #acquired} ends with
 * exactly one {@link #released}, also after it was {@link #lost} (when the application closes the lost
 * lease or the client is closed).
 *
 * <p>Threading: events are delivered in order on the client's one event thread, never on a thread of
 * the lock machinery, so a slow listener delays other listeners but never a lock. A listener that
 * throws is logged and does not affect the lock or the other listeners. If listeners fall so far
 * behind that the client's bounded event queue fills up, further events are dropped and a warning is
 * logged. Implementations must be thread-safe if they are shared between clients.
 */
public interface LockListener {

    /**
     * What an event is about: a lock, or one permit of a semaphore. Immutable.
     *
     * @param kind a lock or a permit
     * @param name the name of the lock or of the semaphore
     * @param slot the slot of a granted permit, {@code 0} to {@code permits - 1}; {@code -1} for a lock
     *     and for a permit that was not granted ({@link #notAcquired}, {@link #acquireFailed})
     * @param permits the semaphore's number of permits; {@code 0} for a lock
     */
    record Target(Kind kind, String name, int slot, int permits) {

        /** The kinds of grant a client hands out. More may be added; a listener treats one it does not know as it likes. */
        public enum Kind {
            /** A {@link DistributedLock}'s grant. */
            LOCK,
            /** One permit of a {@link DistributedSemaphore}. */
            PERMIT,
            /** A reader's grant of a {@link DistributedReadWriteLock}. */
            READ,
            /** A writer's grant of a {@link DistributedReadWriteLock}. */
            WRITE
        }

        /** The events of lock {@code name}. */
        public static Target lock(String name) {
            return new Target(Kind.LOCK, name, -1, 0);
        }

        /** The events of read-write lock {@code name}'s reader ({@code write} false) or writer. */
        public static Target mode(String name, boolean write) {
            return new Target(write ? Kind.WRITE : Kind.READ, name, -1, 0);
        }

        /** A permit of semaphore {@code name} of {@code permits} permits, not (yet) granted: no slot. */
        public static Target permit(String name, int permits) {
            return new Target(Kind.PERMIT, name, -1, permits);
        }

        /** The same target, holding permit slot {@code slot}. */
        public Target withSlot(int slot) {
            return new Target(kind, name, slot, permits);
        }

        /**
         * As messages name it: {@code lock 'x'}, {@code permit 2 of semaphore 'x'}, {@code a permit of
         * semaphore 'x'}, {@code read lock 'x'} or {@code write lock 'x'}.
         */
        @Override
        public String toString() {
            return switch (kind) {
                case LOCK -> "lock '" + name + "'";
                case READ -> "read lock '" + name + "'";
                case WRITE -> "write lock '" + name + "'";
                case PERMIT -> (slot < 0 ? "a permit" : "permit " + slot) + " of semaphore '" + name + "'";
            };
        }
    }

    /**
     * The backend granted the lock or permit; by default passed on to {@link #acquired(String, Duration, long)}
     * for a lock.
     *
     * @param waitTime from the start of the call to the grant
     * @param fencingToken the grant's token (per slot for a permit)
     */
    default void acquired(Target target, Duration waitTime, long fencingToken) {
        ifLock(target, name -> acquired(name, waitTime, fencingToken));
    }

    /** The lock, or every permit, stayed held by others for the whole wait; by default passed on for a lock. */
    default void notAcquired(Target target, Duration waitTime) {
        ifLock(target, name -> notAcquired(name, waitTime));
    }

    /** An attempt failed with an error, as {@link #acquireFailed(String, Duration, LockException)}; by default passed on for a lock. */
    default void acquireFailed(Target target, Duration waitTime, LockException exception) {
        ifLock(target, name -> acquireFailed(name, waitTime, exception));
    }

    /** The grant ended, as {@link #released(String, Duration)}; by default passed on for a lock. */
    default void released(Target target, Duration holdTime) {
        ifLock(target, name -> released(name, holdTime));
    }

    /** The grant was lost, as {@link #lost(String, LockLostException)}; by default passed on for a lock. */
    default void lost(Target target, LockLostException reason) {
        ifLock(target, name -> lost(name, reason));
    }

    /** The backend could not be reached while acquiring or releasing {@code target}; by default passed on for a lock. */
    default void backendUnavailable(Target target, LockBackendUnavailableException exception) {
        ifLock(target, name -> backendUnavailable(name, exception));
    }

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

    /** Runs {@code event} with the name of {@code target} if it is a lock: the defaults of the events by target. */
    private static void ifLock(Target target, Consumer<String> event) {
        if (target.kind() == Target.Kind.LOCK) {
            event.accept(target.name());
        }
    }

    /**
     * A candidate of this client began term {@code term} of election {@code election}; its
     * {@link ElectionListener#elected} is told now.
     *
     * @param term the term number, the fencing token of the election lock's grant
     */
    default void elected(String election, long term) {
    }

    /**
     * Term {@code term} of a candidate of this client in election {@code election} ended for the reason
     * {@code why}; its {@link ElectionListener#revoked} is told now.
     *
     * @param led from the grant of the term's lock to this moment
     */
    default void revoked(String election, long term, Revocation why, Duration led) {
    }

    /**
     * A task for schedule slot {@code slot} was skipped because the backend records {@code recordedSlot}
     * (at or after it) as completed.
     */
    default void slotSkipped(String lockName, Instant slot, Instant recordedSlot) {
    }
}
