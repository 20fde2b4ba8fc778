package io.latchkey.testkit.fault;

import java.util.Objects;

/**
 * A backend URI whose traffic can be cut, for clients of another process (a {@code latchkey run}, a
 * child JVM): every client that connects with {@link #uri()} is cut off the server by {@link #cut()}.
 *
 * <p>Thread-safe if the actions are. {@link #close()} restores traffic and gives the cutting machinery
 * back; it is idempotent.
 */
public final class CuttableUri implements AutoCloseable {

    private final String uri;
    private final Runnable cut;
    private final Runnable restore;
    private final Runnable release;
    private volatile boolean closed;

    private CuttableUri(String uri, Runnable cut, Runnable restore, Runnable release) {
        this.uri = Objects.requireNonNull(uri, "uri");
        this.cut = Objects.requireNonNull(cut, "cut");
        this.restore = Objects.requireNonNull(restore, "restore");
        this.release = Objects.requireNonNull(release, "release");
    }

    /**
     * A cuttable URI built by a server fixture.
     *
     * @param cut stops all traffic of the URI's clients, without resetting connections
     * @param restore lets traffic through again
     * @param release gives the machinery back once the URI's clients are gone
     */
    public static CuttableUri of(String uri, Runnable cut, Runnable restore, Runnable release) {
        return new CuttableUri(uri, cut, restore, release);
    }

    /** The URI to connect with. */
    public String uri() {
        return uri;
    }

    /** Cuts every client of the URI off the server. */
    public void cut() {
        cut.run();
    }

    /** Lets the URI's clients reach the server again. */
    public void restore() {
        restore.run();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        release.run();
    }
}
