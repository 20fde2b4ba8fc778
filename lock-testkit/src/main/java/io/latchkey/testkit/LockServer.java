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

    /** Stops and removes the server's containers. */
    @Override
    void close();
}
