package io.latchkey.testkit.history;

/**
 * A resource protected by fencing tokens: it keeps the highest token it has accepted and rejects
 * every write with a lower one, as a storage system that checks tokens would.
 *
 * <p>Every write is recorded in the grant's {@link History}, in the order the resource decided it.
 * Thread-safe: writes are decided one at a time.
 */
public final class FencedResource {

    private final String name;
    private long highest = Long.MIN_VALUE;
    private int accepted;

    /** A resource for the lock {@code name}. */
    public FencedResource(String name) {
        this.name = name;
    }

    /** Writes on behalf of {@code grant}; returns whether the write was accepted. */
    public synchronized boolean write(History.Grant grant) {
        boolean ok = grant.token() >= highest;
        if (ok) {
            highest = grant.token();
            accepted++;
        }
        grant.wrote(ok, History.now());
        return ok;
    }

    /** The highest token accepted so far, or {@link Long#MIN_VALUE}. */
    public synchronized long highestToken() {
        return highest;
    }

    /** How many writes were accepted. */
    public synchronized int acceptedWrites() {
        return accepted;
    }

    @Override
    public synchronized String toString() {
        return "FencedResource{'" + name + "', highest token " + highest + ", " + accepted + " writes accepted}";
    }
}
