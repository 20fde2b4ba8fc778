package io.latchkey.testkit.zookeeper;

import io.latchkey.testkit.LockServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A standalone ZooKeeper 3.8 server (Debian's {@code zookeeper} package) in a container, reached
 * through a dynamically published port on localhost.
 *
 * <p>The server runs with a short tick (500 ms, so sessions of 1 s to 120 s are accepted), the
 * four-letter words {@code srvr, ruok, mntr, wchp, wchc, cons, stat} allowed, and the container
 * manager checking every 500 ms, so that empty container nodes disappear quickly. {@link #restart()}
 * kills the server process and lets it start again in the same container: the published port and
 * the data directory stay.
 *
 * <p>Not thread-safe: drive it from the test's thread.
 */
public final class ZooKeeperServer implements LockServer {

    /** How often the server's container manager deletes empty container nodes ({@code znode.container.checkIntervalMs}). */
    public static final Duration CONTAINER_CHECK_INTERVAL = Duration.ofMillis(ZooKeeperNode.CONTAINER_CHECK_MS);

    private final ZooKeeperNode node;

    private ZooKeeperServer() {
        this.node = new ZooKeeperNode("zookeeper", 1, null, null, answer -> answer.contains("Mode: standalone"));
    }

    /** Builds the image if needed, starts the server and returns once it serves requests. */
    public static ZooKeeperServer start() {
        ZooKeeperServer server = new ZooKeeperServer();
        try {
            server.node.start();
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    @Override
    public List<InetSocketAddress> endpoints() {
        return List.of(node.endpoint());
    }

    /** {@code zookeeper://host:port,...} without a path, so clients use the backend's default base path. */
    @Override
    public String uri(List<InetSocketAddress> endpoints) {
        return uriOf(endpoints);
    }

    static String uriOf(List<InetSocketAddress> endpoints) {
        return "zookeeper://" + endpoints.stream().map(a -> a.getHostString() + ":" + a.getPort())
                .collect(Collectors.joining(","));
    }

    /** The ZooKeeper connection string ({@code host:port}) for a raw ZooKeeper or Curator client. */
    public String connectString() {
        InetSocketAddress a = node.endpoint();
        return a.getHostString() + ":" + a.getPort();
    }

    /** Sends a four-letter word such as {@code srvr}, {@code mntr} or {@code wchp} and returns the answer. */
    public String fourLetterWord(String word) throws IOException {
        return node.fourLetterWord(word);
    }

    @Override
    public void restart() {
        String old = node.killForRestart();
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (System.nanoTime() - deadline < 0) {
            String pid = node.pid();
            if (!pid.isEmpty() && !pid.equals(old) && node.serving()) {
                return;
            }
            ZooKeeperNode.sleep(100);
        }
        throw new IllegalStateException("zookeeper did not serve again within a minute after a restart; log:\n" + node.logs());
    }

    /** Stops the server's process (SIGSTOP): connections stay open and nothing answers. */
    @Override
    public void pause() {
        node.pause();
    }

    @Override
    public void unpause() {
        node.unpause();
    }

    @Override
    public void close() {
        node.close();
    }

    @Override
    public String toString() {
        return "ZooKeeperServer{" + connectString() + '}';
    }
}
