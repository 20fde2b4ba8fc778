package io.latchkey.zookeeper;

import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
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

    /** How long the server's container manager may take to delete an empty container node, plus a round trip. */
    static Duration containerReapBound(Duration timeout) {
        return ZooKeeperServer.CONTAINER_CHECK_INTERVAL.multipliedBy(3).plus(timeout);
    }
}
