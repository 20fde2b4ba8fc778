package io.latchkey.zookeeper;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.LockClients;
import io.latchkey.spi.LockProviderFactory;
import io.latchkey.spi.LockUri;
import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryUntilElapsed;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Latchkey's ZooKeeper provider: locks on Curator's {@code InterProcessMutex}, for URIs like
 * {@code zookeeper://user:password@zk1:2181,zk2:2181/base/path?lease=30s}.
 *
 * <p><b>Layout.</b> Each lock name is a container node under the base path (the URI's path, default
 * {@code /latchkey}, prefixed by the {@code namespace} option if set), named by {@link LockPaths}
 * ({@code report:nightly} is {@code /latchkey/report%3Anightly}); contenders create ephemeral sequential
 * nodes under it, exactly as {@code InterProcessMutex} does, so Latchkey and plain Curator mutexes on
 * the same path exclude each other. The lowest node holds the lock; every other waiter watches only
 * its predecessor, so a release wakes one waiter, and grants follow creation order (FIFO). The server's
 * container manager deletes a lock name's node once its last lock node is gone, so a million names
 * over time leave no million empty nodes.
 *
 * <p><b>Closing from any thread (contract rule 4, docs/contract.md).</b> {@code InterProcessMutex} keys its reentrancy bookkeeping
 * by thread and refuses {@code release()} from another thread, yet the lock it holds is nothing but
 * its ephemeral sequential node, and its release deletes that node. So each acquire runs a fresh
 * mutex on a worker thread, the grant keeps the node's path and drops the mutex (the shared layer does
 * reentrancy), and closing deletes the node with Curator's guaranteed delete from whatever thread
 * closes. The worker thread also bounds a Curator call stuck on a dead server by the caller's deadline
 * plus the {@code timeout} option.
 *
 * <p><b>Lease and loss (contract rule 7).</b> The session timeout is the {@code lease} option (the server may
 * clamp it to its {@code min/maxSessionTimeout}; the negotiated value is used). See
 * {@link ZooKeeperLease} for the evidence; {@code SUSPENDED} lets the validity deadline run out,
 * {@code LOST} ends the lease. <b>Fencing (contract rule 8):</b> the lock node's {@code czxid}.
 *
 * <p><b>Security.</b> With a username and password, the client authenticates with the {@code digest}
 * scheme and creates the base path and all lock nodes with an ACL granting everything to that identity
 * only, so a client without the credentials can neither create nor delete lock nodes there.
 *
 * <p>Thread-safety: stateless; clients it creates are thread-safe.
 */
public final class ZooKeeperLockProvider implements LockProviderFactory {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockProvider.class);
    static final String BACKEND = "zookeeper";

    /** Found by {@link java.util.ServiceLoader}; does nothing. */
    public ZooKeeperLockProvider() {
    }

    /**
     * A lock client on the application's own, started Curator client, which it does not close. The
     * session timeout of {@code curator} is the lease; an authenticated {@code curator} (digest) needs
     * the same credentials in {@code options} so that the lock nodes get the matching ACL.
     *
     * @param basePath the base path, or {@code null} for {@code /latchkey}; the namespace option prefixes it
     * @throws IllegalArgumentException if {@code curator} is not started or the base path is illegal
     * @throws LockBackendUnavailableException if ZooKeeper cannot be reached within the timeout option
     */
    public static LockClient client(CuratorFramework curator, String basePath, LockOptions options) {
        Objects.requireNonNull(curator, "curator");
        LockClients.checkOptions(new ZooKeeperLockProvider(), options, "the application's Curator client");
        if (curator.getState() != CuratorFrameworkState.STARTED) {
            throw new IllegalArgumentException("the Curator client must be started before Latchkey uses it; state: "
                    + curator.getState());
        }
        String base = LockPaths.basePath(basePath, options.namespace());
        return LockClients.of(BACKEND, open(curator, false, base, options, curator.getZookeeperClient().getCurrentConnectionString()), options);
    }

    @Override
    public Set<String> schemes() {
        return Set.of("zookeeper");
    }

    @Override
    public int defaultPort(String scheme) {
        return 2181;
    }

    @Override
    public LockBackend connect(LockUri uri, LockOptions options) {
        String base = LockPaths.basePath(uri.path(), options.namespace());
        if (options.username() != null && options.password() == null) {
            throw new IllegalArgumentException("zookeeper user '" + options.username() + "' has no password: digest"
                    + " authentication needs both, as in zookeeper://user:password@host:2181" + base);
        }
        int timeoutMs = millis(options.timeout());
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(uri.hosts().stream().map(LockUri.HostAndPort::toString).collect(Collectors.joining(",")))
                .sessionTimeoutMs(millis(options.lease()))
                .connectionTimeoutMs(timeoutMs)
                .retryPolicy(new RetryUntilElapsed(timeoutMs, Math.max(50, Math.min(1000, timeoutMs / 10))))
                // the ensemble's own view of its addresses is not what this client reaches (containers, NAT)
                .ensembleTracker(false)
                .threadFactory(DaemonThreads.factory("latchkey-zookeeper-curator"));
        if (options.username() != null) {
            builder.authorization("digest", (options.username() + ":" + options.password()).getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework curator = builder.build();
        curator.start();
        return open(curator, true, base, options, uri.redacted());
    }

    private static ZooKeeperBackend open(CuratorFramework curator, boolean owned, String base, LockOptions options, String shown) {
        try {
            if (!curator.blockUntilConnected(millis(options.timeout()), TimeUnit.MILLISECONDS)) {
                throw new LockBackendUnavailableException(null, "could not connect to zookeeper at " + shown + " within the"
                        + " timeout option (" + options.timeout() + "); check that the ensemble is up and reachable", null);
            }
            List<ACL> acl = acl(options);
            ensureBasePath(curator, base, acl, shown);
            long negotiated = curator.getZookeeperClient().getZooKeeper().getSessionTimeout();
            if (negotiated != options.lease().toMillis()) {
                log.info("zookeeper at {} negotiated a session timeout of {} ms for a lease of {}: locks of this client"
                        + " live {} ms after their holder falls silent", shown, negotiated, options.lease(), negotiated);
            }
            return new ZooKeeperBackend(curator, owned, base, acl, options.timeout());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeIfOwned(curator, owned);
            throw new LockException(null, "interrupted while connecting to zookeeper at " + shown, e);
        } catch (RuntimeException e) {
            closeIfOwned(curator, owned);
            throw e;
        } catch (Exception e) {
            closeIfOwned(curator, owned);
            if (e instanceof KeeperException.NoAuthException) {
                throw new LockException(null, "not allowed to create the zookeeper base path '" + base + "' at " + shown
                        + ": its parent is protected by an ACL; connect with credentials that may create it", e);
            }
            throw new LockBackendUnavailableException(null, "could not prepare the zookeeper base path '" + base + "' at "
                    + shown + ": " + e + "; check that the ensemble is up and reachable", e);
        }
    }

    private static void closeIfOwned(CuratorFramework curator, boolean owned) {
        if (owned) {
            curator.close();
        }
    }

    /** Everything to the digest identity of the credentials, or open to all without credentials. */
    static List<ACL> acl(LockOptions options) {
        if (options.username() == null) {
            return ZooDefs.Ids.OPEN_ACL_UNSAFE;
        }
        try {
            String digest = DigestAuthenticationProvider.generateDigest(options.username() + ":" + options.password());
            return List.of(new ACL(ZooDefs.Perms.ALL, new Id("digest", digest)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is missing from this JVM; zookeeper digest authentication needs it", e);
        }
    }

    /**
     * Creates the base path as a persistent node with the ACL (a container would be deleted when empty
     * and could be recreated by anyone). An existing base path keeps its ACL: one these credentials may
     * not read is refused here, with a clear message, rather than at the first lock; one that lets other
     * identities create or delete lock nodes gets a warning.
     */
    private static void ensureBasePath(CuratorFramework curator, String base, List<ACL> acl, String shown) throws Exception {
        if (curator.checkExists().forPath(base) == null) {
            try {
                curator.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).withACL(acl, true).forPath(base);
            } catch (KeeperException.NodeExistsException e) {
                // created meanwhile by another client
            }
        }
        List<ACL> actual;
        try {
            actual = curator.getACL().forPath(base);
        } catch (KeeperException.NoAuthException e) {
            throw new LockException(null, "not allowed to use the zookeeper base path '" + base + "' at " + shown
                    + ": its ACL belongs to another identity; connect with the username and password that own it"
                    + " (zookeeper://user:password@host:2181" + base + ")", e);
        }
        boolean foreign = actual.stream().anyMatch(a -> !acl.contains(a)
                && (a.getPerms() & (ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE)) != 0);
        if (foreign && acl != ZooDefs.Ids.OPEN_ACL_UNSAFE) {
            log.warn("zookeeper base path '{}' lets other identities create or delete lock nodes (ACL {});"
                    + " set its ACL to the digest identity of this client's credentials only", base, actual);
        }
    }

    private static int millis(Duration d) {
        return (int) Math.min(Integer.MAX_VALUE, d.toMillis());
    }
}
