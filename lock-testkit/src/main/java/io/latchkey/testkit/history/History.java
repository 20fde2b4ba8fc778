package io.latchkey.testkit.history;

import io.latchkey.Lease;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The record of every grant, validity observation, write and release of a test, on one clock: the
 * {@link System#nanoTime()} of the test JVM.
 *
 * <p>Each grant is a {@link Grant} handle that records what happens to it. Times are chosen so that
 * the record never claims more than was observed: a grant counts as valid from the moment the
 * acquire <em>returned</em>, and until the moment <em>before</em> the last check that found it valid.
 * For a holder in a child JVM the parent records what it can prove: the grant from when it read the
 * child's answer, a validity check from when it sent the request. {@link HistoryChecker} therefore
 * never reports a violation that did not happen, whatever the scheduling delays.
 *
 * <p>Thread-safe: events are appended under a lock, in the order they are recorded.
 */
public final class History {

    private final List<Event> events = new ArrayList<>();
    private final AtomicInteger grants = new AtomicInteger();
    /** The semaphore and slot of every permit grant, by grant id; lock grants are not in it. */
    private final Map<Integer, Permit> permits = new ConcurrentHashMap<>();

    /** The semaphore and slot of a permit grant. */
    record Permit(String semaphore, int slot) {
    }

    /** Whether each grant of a read-write lock was a write, by grant id; other grants are not in it. */
    private final Map<Integer, Boolean> modes = new ConcurrentHashMap<>();

    /** The clock every event is measured on. */
    public static long now() {
        return System.nanoTime();
    }

    /**
     * Records a grant.
     *
     * @param actor who holds it, for messages (a thread, a client, a child JVM)
     * @param requestedAt when the acquire was requested
     * @param grantedAt when the acquire returned (or the grant was seen), after {@code requestedAt}
     */
    public Grant acquired(String actor, String lock, long token, long requestedAt, long grantedAt) {
        Grant grant = new Grant(grants.incrementAndGet(), actor, lock, token);
        append(new Event(Event.Kind.ACQUIRED, grantedAt, requestedAt, grant.id, actor, lock, token));
        return grant;
    }

    /**
     * Records the grant of a permit of a semaphore. Its events carry {@link #permitKey} as their lock,
     * so that {@link HistoryChecker}'s rules for locks hold per slot (one valid holder per slot, tokens
     * growing per slot, a fenced resource per slot); {@link HistoryChecker#assertPermitsRespected} adds
     * the count of valid leases of the semaphore against its permits.
     */
    public Grant acquiredPermit(String actor, String semaphore, int slot, long token, long requestedAt, long grantedAt) {
        Grant grant = acquired(actor, permitKey(semaphore, slot), token, requestedAt, grantedAt);
        permits.put(grant.id, new Permit(semaphore, slot));
        return grant;
    }

    /**
     * Records the grant of read-write lock {@code name}'s write lock ({@code write}) or read lock. Its
     * events name the read-write lock; {@link HistoryChecker#assertModesRespected} checks them (readers
     * together, a writer alone, one token sequence), not {@link HistoryChecker#assertConsistent}.
     */
    public Grant acquiredMode(String actor, String name, boolean write, long token, long requestedAt, long grantedAt) {
        Grant grant = new Grant(grants.incrementAndGet(), actor, name, token);
        modes.put(grant.id, write);
        append(new Event(Event.Kind.ACQUIRED, grantedAt, requestedAt, grant.id, actor, name, token));
        return grant;
    }

    /** Whether a grant was a write ({@code true}) or a read of a read-write lock; null for any other grant. */
    Boolean modeOf(int grant) {
        return modes.get(grant);
    }

    /** What the events of a permit grant name as their lock: the semaphore and the slot. */
    public static String permitKey(String semaphore, int slot) {
        return semaphore + " [permit " + slot + "]";
    }

    /** The semaphore and slot of a permit grant, or null for a lock's grant. */
    Permit permitOf(int grant) {
        return permits.get(grant);
    }

    /**
     * Records one guarded write under {@code lease}: its grant, a validity check, the write to
     * {@code resource} if the lease was valid and a check after it, then the close and the release.
     *
     * @param requestedAt when the acquire that returned {@code lease} was requested
     * @throws io.latchkey.LockException if the close did not reach the backend; the release is then
     *     not recorded, since the lock only expires later
     */
    public void writeOnce(String actor, Lease lease, long requestedAt, FencedResource resource) {
        Grant grant = acquired(actor, lease.lockName(), lease.fencingToken(), requestedAt, now());
        if (grant.check(lease::isValid)) {
            resource.write(grant);
            grant.check(lease::isValid);
        }
        lease.close();
        grant.released(now());
    }

    /** Records a fault (a kill, a pause, a cut, a restart) that begins at {@code at}. */
    public void fault(String what, String lock, long at) {
        append(new Event(Event.Kind.FAULT, at, at, 0, what, lock, 0));
    }

    /** A copy of the events, in the order they were recorded. */
    public List<Event> events() {
        synchronized (events) {
            return List.copyOf(events);
        }
    }

    void append(Event e) {
        synchronized (events) {
            events.add(e);
        }
    }

    /** The record of one grant: what its holder observed about it. Thread-safe. */
    public final class Grant {
        private final int id;
        private final String actor;
        private final String lock;
        private final long token;

        private Grant(int id, String actor, String lock, long token) {
            this.id = id;
            this.actor = actor;
            this.lock = lock;
            this.token = token;
        }

        public int id() {
            return id;
        }

        public String actor() {
            return actor;
        }

        public String lock() {
            return lock;
        }

        public long token() {
            return token;
        }

        /** The permit slot of a grant recorded with {@link History#acquiredPermit}; -1 for a lock's grant. */
        public int slot() {
            Permit p = permits.get(id);
            return p == null ? -1 : p.slot();
        }

        /** The holder found the lease valid, by a check that started at {@code checkStartedAt}. */
        public void valid(long checkStartedAt) {
            append(new Event(Event.Kind.VALID, checkStartedAt, checkStartedAt, id, actor, lock, token));
        }

        /** The holder found the lease invalid at {@code at}. */
        public void invalid(long at) {
            append(new Event(Event.Kind.INVALID, at, at, id, actor, lock, token));
        }

        /** The holder closed the lease; the close returned at {@code at}. */
        public void released(long at) {
            append(new Event(Event.Kind.RELEASED, at, at, id, actor, lock, token));
        }

        /** Checks the lease now and records what it found; returns it. */
        public boolean check(java.util.function.BooleanSupplier isValid) {
            long before = now();
            boolean valid = isValid.getAsBoolean();
            if (valid) {
                valid(before);
            } else {
                invalid(now());
            }
            return valid;
        }

        void wrote(boolean accepted, long at) {
            append(new Event(accepted ? Event.Kind.WRITE_ACCEPTED : Event.Kind.WRITE_REJECTED, at, at, id, actor,
                    lock, token));
        }

        History history() {
            return History.this;
        }

        @Override
        public String toString() {
            return "grant #" + id + " of '" + lock + "' to " + actor + " (token " + token + ")";
        }
    }
}
