package io.latchkey.zookeeper;

import io.latchkey.LockOptions;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LockUri;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Facts about a Curator client's session and its bounds, for {@link ZooKeeperLockProvider}. Stateless. */
final class Sessions {

    private static final Logger log = LoggerFactory.getLogger(Sessions.class);
    /** How long a close interrupted past its bound may take to shut its threads down. */
    private static final long CLOSE_AFTER_INTERRUPT_MS = 200;

    /**
     * Classes of the ZooKeeper client and of Curator that a connect, its base path and the first locks
     * load; names, so that one a later version renames is skipped rather than failing the connect.
     */
    private static final List<String> CLIENT_CLASSES = List.of(
            "org.apache.zookeeper.ZooKeeper", "org.apache.zookeeper.ClientCnxn", "org.apache.zookeeper.ClientCnxnSocketNIO",
            "org.apache.zookeeper.ZKWatchManager", "org.apache.zookeeper.client.ZKClientConfig",
            "org.apache.zookeeper.client.StaticHostProvider", "org.apache.zookeeper.data.Stat",
            "org.apache.zookeeper.data.ACL", "org.apache.zookeeper.proto.ConnectRequest",
            "org.apache.zookeeper.proto.ConnectResponse", "org.apache.zookeeper.proto.RequestHeader",
            "org.apache.zookeeper.proto.ReplyHeader", "org.apache.zookeeper.proto.WatcherEvent",
            "org.apache.zookeeper.proto.ExistsRequest", "org.apache.zookeeper.proto.ExistsResponse",
            "org.apache.zookeeper.proto.GetACLRequest", "org.apache.zookeeper.proto.GetACLResponse",
            "org.apache.zookeeper.proto.CreateRequest", "org.apache.zookeeper.proto.CreateResponse",
            "org.apache.zookeeper.proto.Create2Response", "org.apache.zookeeper.proto.GetChildrenRequest",
            "org.apache.zookeeper.proto.GetChildrenResponse", "org.apache.zookeeper.proto.DeleteRequest",
            "org.apache.zookeeper.proto.SyncRequest", "org.apache.zookeeper.proto.SyncResponse",
            "org.apache.zookeeper.proto.GetDataRequest", "org.apache.zookeeper.proto.GetDataResponse",
            "org.apache.jute.BinaryInputArchive", "org.apache.jute.BinaryOutputArchive",
            "org.apache.curator.framework.imps.CuratorFrameworkImpl", "org.apache.curator.framework.imps.ExistsBuilderImpl",
            "org.apache.curator.framework.imps.GetACLBuilderImpl", "org.apache.curator.framework.imps.CreateBuilderImpl",
            "org.apache.curator.framework.imps.GetChildrenBuilderImpl", "org.apache.curator.framework.imps.DeleteBuilderImpl",
            "org.apache.curator.framework.imps.SyncBuilderImpl", "org.apache.curator.framework.imps.GetDataBuilderImpl",
            "org.apache.curator.framework.imps.CuratorEventImpl", "org.apache.curator.framework.imps.NamespaceWatcher",
            "org.apache.curator.framework.imps.OperationAndData", "org.apache.curator.framework.state.ConnectionStateManager",
            "org.apache.curator.ConnectionState", "org.apache.curator.HandleHolder", "org.apache.curator.RetryLoopImpl",
            "org.apache.curator.connection.StandardConnectionHandlingPolicy");

    private Sessions() {
    }

    /**
     * Starts loading the ZooKeeper client's and Curator's classes on a daemon thread of its own, to run
     * while the probe talks to the server: in a cold JVM (four starting at once on two cores) loading
     * and initialising them takes a good share of a short timeout, and that time is this JVM's, not the
     * server's. {@link #awaitPreload} waits for it, and the connect does not charge that wait.
     */
    static Thread preload() {
        Thread t = DaemonThreads.factory("latchkey-zookeeper-preload").newThread(() -> {
            ClassLoader loader = Sessions.class.getClassLoader();
            for (String name : CLIENT_CLASSES) {
                try {
                    Class.forName(name, true, loader);
                } catch (ClassNotFoundException | LinkageError e) {
                    // another version of the client: it loads what it needs itself
                }
            }
        });
        t.start();
        return t;
    }

    /** Waits for {@link #preload} to finish, at most {@code bound}. */
    static void awaitPreload(Thread preloading, Duration bound) throws InterruptedException {
        preloading.join(Math.max(1, bound.toMillis()));
    }

    /** The session timeout the server granted the client's current session. */
    static Duration negotiated(CuratorFramework curator) {
        try {
            return Duration.ofMillis(curator.getZookeeperClient().getZooKeeper().getSessionTimeout());
        } catch (Exception e) {
            return Duration.ZERO; // no connection object: no session either
        }
    }

    /** The hosts of a ZooKeeper connection string such as {@code h1:2181,h2:2181/chroot}. */
    static List<LockUri.HostAndPort> hostsOf(String connectString) {
        int chroot = connectString.indexOf('/');
        String hosts = chroot < 0 ? connectString : connectString.substring(0, chroot);
        List<LockUri.HostAndPort> result = new ArrayList<>();
        for (String h : hosts.split(",")) {
            String host = h.trim();
            int colon = host.lastIndexOf(':');
            if (colon > 0 && host.indexOf(':') == colon) {
                result.add(new LockUri.HostAndPort(host.substring(0, colon), Integer.parseInt(host.substring(colon + 1))));
            } else if (!host.isEmpty()) {
                result.add(new LockUri.HostAndPort(host, 2181));
            }
        }
        return result;
    }

    /**
     * Closes a Curator client of ours within about {@code bound}. Curator's close sends the session's
     * close request and waits for its answer, which a server that accepts connections but does not
     * answer never sends: the ZooKeeper client then waits out its connection timeout, a share of the
     * session timeout. Past the bound the closing thread is interrupted, which ZooKeeper's close takes
     * as "stop waiting, shut the connection down"; the session then ends on the server by its own
     * timeout, taking its nodes with it.
     */
    static void closeWithin(CuratorFramework curator, Duration bound) {
        Thread closer = DaemonThreads.factory("latchkey-zookeeper-close").newThread(curator::close);
        closer.start();
        try {
            closer.join(Math.max(1, bound.toMillis()));
            if (closer.isAlive()) {
                closer.interrupt();
                closer.join(CLOSE_AFTER_INTERRUPT_MS);
            }
        } catch (InterruptedException e) {
            closer.interrupt();
            Thread.currentThread().interrupt();
        }
        if (closer.isAlive()) {
            log.debug("closing the zookeeper client took longer than {}; it goes on in the background",
                    Durations.format(bound));
        }
    }
}
