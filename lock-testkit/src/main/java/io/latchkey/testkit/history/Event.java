package io.latchkey.testkit.history;

/**
 * One entry of a {@link History}.
 *
 * @param kind what happened
 * @param at when, on the test JVM's {@link System#nanoTime()}
 * @param requestedAt for {@link Kind#ACQUIRED}, when the acquire was requested; otherwise {@code at}
 * @param grant the grant it concerns, numbered from 1 in the order recorded; 0 for a fault
 * @param actor who acted (for a fault: what the fault was)
 * @param lock the lock name
 * @param token the grant's fencing token; 0 for a fault
 */
public record Event(Kind kind, long at, long requestedAt, int grant, String actor, String lock, long token) {

    /** The kinds of events. */
    public enum Kind {
        ACQUIRED, VALID, INVALID, WRITE_ACCEPTED, WRITE_REJECTED, RELEASED, FAULT
    }

    @Override
    public String toString() {
        return String.format("%,.3f ms %s %s '%s' grant #%d token %d", at / 1e6, kind, actor, shortName(lock), grant, token);
    }

    private static String shortName(String lock) {
        return lock == null || lock.length() <= 40 ? lock : lock.substring(0, 37) + "...";
    }
}
