package io.latchkey.cli.server;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;

/**
 * A real, standalone ZooKeeper server (the {@code org.apache.zookeeper:zookeeper} artifact) inside this
 * JVM, on the loopback interface, with its data in a temporary directory that {@link #close()} removes.
 *
 * <p>The tick is short ({@value #TICK_MS} ms) so that sessions, and with them Latchkey leases, may be
 * as short as two ticks, and the server notices a silent client within a tick; the maximum session is
 * raised to a minute, so that any {@code lease} from a second upwards is taken as asked. What it is
 * not: an ensemble, so it shows no leader failover. Thread-safe: start once, close from any thread.
 */
public final class EmbeddedZooKeeper implements AutoCloseable {

    /** The server's tick; sessions may last from two ticks to {@value #MAX_SESSION_MS} ms. */
    public static final int TICK_MS = 200;
    static final int MAX_SESSION_MS = 60_000;

    private final Path dataDir;
    private final ZooKeeperServer server;
    private final ServerCnxnFactory factory;
    private volatile boolean closed;

    private EmbeddedZooKeeper(Path dataDir, ZooKeeperServer server, ServerCnxnFactory factory) {
        this.dataDir = dataDir;
        this.server = server;
        this.factory = factory;
    }

    /**
     * Starts a server on {@code port} of the loopback interface, or on a free port if {@code port} is 0.
     *
     * @throws UncheckedIOException if the port is taken or the data directory cannot be made
     */
    public static EmbeddedZooKeeper start(int port) {
        Path dir = null;
        try {
            dir = Files.createTempDirectory("latchkey-zookeeper-");
            File data = dir.toFile();
            ZooKeeperServer server = new ZooKeeperServer(data, data, TICK_MS);
            server.setMinSessionTimeout(2 * TICK_MS);
            server.setMaxSessionTimeout(MAX_SESSION_MS);
            ServerCnxnFactory factory = ServerCnxnFactory.createFactory(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 100);
            factory.startup(server);
            return new EmbeddedZooKeeper(dir, server, factory);
        } catch (IOException e) {
            deleteQuietly(dir);
            throw new UncheckedIOException("cannot start the embedded zookeeper on port " + port
                    + (port == 0 ? "" : " (is it taken? choose another with --port)") + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            deleteQuietly(dir);
            throw new IllegalStateException("interrupted while starting the embedded zookeeper", e);
        }
    }

    /** The port clients connect to. */
    public int port() {
        return factory.getLocalPort();
    }

    /** {@code 127.0.0.1:port}. */
    public String connectString() {
        return InetAddress.getLoopbackAddress().getHostAddress() + ":" + port();
    }

    /** The Latchkey URI for this server, with {@code query} (such as {@code lease=4s}) if not empty. */
    public String uri(String query) {
        return "zookeeper://" + connectString() + "/latchkey" + (query == null || query.isEmpty() ? "" : "?" + query);
    }

    /** Stops the server and removes its data. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        factory.shutdown();
        server.shutdown();
        deleteQuietly(dataDir);
    }

    private static void deleteQuietly(Path dir) {
        if (dir == null) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a leftover temporary directory is not worth failing an exit for
        }
    }
}
