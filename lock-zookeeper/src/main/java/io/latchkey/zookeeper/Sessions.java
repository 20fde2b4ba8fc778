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

    private Sessions() {
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
