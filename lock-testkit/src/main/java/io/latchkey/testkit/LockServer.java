package io.latchkey.testkit;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * A running backend server (or cluster) that the contract runs against, reached from the test only
 * through published ports on localhost.
 *
 * <p>A backend's contract test passes a factory of one to {@link LockContract}'s constructor, and the
 * kit starts, shares and closes it; the kit's fixtures for Redis, ZooKeeper, etcd and Kafka implement
 * it, and a third-party backend writes its own.
 */
public interface LockServer extends AutoCloseable {

    /** The addresses the test reaches the server at, one per node, in a stable order. */
    List<InetSocketAddress> endpoints();

    /**
     * A connection URI (scheme, hosts and path, no query) that reaches the server through
     * {@code endpoints}: the server's own, or TCP proxies the kit put in front of them.
     */
    String uri(List<InetSocketAddress> endpoints);

    /**
     * Restarts the server process (every node), keeping what the backend normally keeps on disk, and
     * returns once it serves again at the same endpoints.
     */
    void restart();

    /**
     * Stops every process of the server (every node), as SIGSTOP does: the server's
     * connections and listening sockets stay open, the kernel still completes TCP handshakes, and
     * nothing answers, until {@link #unpause()}. The contract's paused-server tests use it; their
     * server is left serving afterwards.
     *
     * <p>The default refuses: a server that the contract runs against overrides both methods (the
     * kit's container fixtures and a server in a child process, both with SIGSTOP and SIGCONT).
     *
     * @throws UnsupportedOperationException if this server cannot be paused
     */
    default void pause() {
        throw new UnsupportedOperationException(getClass().getName() + " cannot be paused: override LockServer.pause()"
                + " and unpause() (SIGSTOP and SIGCONT of its processes) for the contract's"
                + " paused-server tests");
    }

    /** Undoes {@link #pause()}; returns once the server's processes run again. Idempotent. */
    default void unpause() {
        throw new UnsupportedOperationException(getClass().getName() + " cannot be paused: override LockServer.unpause()");
    }

    /** Stops and removes the server's containers. */
    @Override
    void close();
}
