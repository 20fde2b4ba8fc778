package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockOptions;
import io.latchkey.spi.LockUri;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;

/** A raw Curator client for looking at what the backend left in ZooKeeper, and bounds from the server's config. */
final class ZooKeeperTestSupport {

    private ZooKeeperTestSupport() {
    }

    static CuratorFramework rawClient(String connectString) {
        return rawClient(connectString, null);
    }

    /** A started raw client, authenticated with digest {@code user:password} if {@code credentials} is set. */
    static CuratorFramework rawClient(String connectString, String credentials) {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder().connectString(connectString)
                .sessionTimeoutMs(10_000).connectionTimeoutMs(5_000).retryPolicy(new RetryOneTime(100)).ensembleTracker(false);
        if (credentials != null) {
            b.authorization("digest", credentials.getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework c = b.build();
        c.start();
        return c;
    }

    /** The server's tick as the backend learns it: half the minimum session timeout the server negotiates. */
    static Duration tick(ZooKeeperServer server) throws Exception {
        java.net.InetSocketAddress a = server.endpoints().get(0);
        return ServerProbe.probe(java.util.List.of(new io.latchkey.spi.LockUri.HostAndPort(a.getHostString(), a.getPort())),
                io.latchkey.spi.Deadline.after(Duration.ofSeconds(5))).tick();
    }

    /** A started raw client with the given session timeout. */
    static CuratorFramework rawClientWithSession(String connectString, Duration session) {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connectString)
                .sessionTimeoutMs((int) session.toMillis()).connectionTimeoutMs(5_000).retryPolicy(new RetryOneTime(100))
                .ensembleTracker(false).build();
        c.start();
        return c;
    }

    /**
     * A backend of its own on {@code server}'s first endpoint, with {@code options}: for tests that count its
     * session's requests.
     */
    static ZooKeeperBackend backend(ZooKeeperServer server, LockOptions options) {
        InetSocketAddress a = server.endpoints().get(0);
        LockUri uri = new LockUri("zookeeper", List.of(new LockUri.HostAndPort(a.getHostString(), a.getPort())), "",
                server.uri(server.endpoints()));
        return (ZooKeeperBackend) new ZooKeeperLockProvider().connect(uri, options);
    }

    /**
     * The connection's last client request id ({@code lcxid}) for {@code session}, from the {@code cons} word: a
     * ZooKeeper client numbers its requests 1, 2, 3…, and pings, authentication and watch resets carry ids the
     * server leaves out of it, so its growth is the number of requests the session sent.
     */
    static long lastRequestId(ZooKeeperServer server, long session) throws Exception {
        String cons = server.fourLetterWord("cons");
        for (String line : cons.split("\n")) {
            if (line.contains("sid=0x" + Long.toHexString(session) + ",")) {
                Matcher m = Pattern.compile("lcxid=0x([0-9a-f]+)").matcher(line);
                assertThat(m.find()).as("lcxid in %s", line).isTrue();
                return Long.parseLong(m.group(1), 16);
            }
        }
        throw new AssertionError("no connection of session 0x" + Long.toHexString(session) + " in cons:\n" + cons);
    }

    /** How long the server's container manager may take to delete an empty container node, plus a round trip. */
    static Duration containerReapBound(Duration timeout) {
        return ZooKeeperServer.CONTAINER_CHECK_INTERVAL.multipliedBy(3).plus(timeout);
    }
}
