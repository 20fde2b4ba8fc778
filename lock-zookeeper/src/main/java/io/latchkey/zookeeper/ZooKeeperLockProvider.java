package io.latchkey.zookeeper;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.LockClients;
import io.latchkey.spi.LockProviderFactory;
import io.latchkey.spi.LockUri;
import io.latchkey.spi.Startup;
import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryForever;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Latchkey's ZooKeeper provider: locks on ephemeral sequential nodes through Curator, for URIs like
 * {@code zookeeper://user:password@zk1:2181,zk2:2181/base/path?lease=30s}.
 *
 * <p><b>Layout.</b> Each lock name is a container node under the base path (the URI's path, default
 * {@code /latchkey}, prefixed by the {@code namespace} option if set), named by {@link LockPaths}
 * ({@code report:nightly} is {@code /latchkey/report%3Anightly}); contenders create ephemeral sequential
 * nodes under it, named as Curator's {@code InterProcessMutex} names them, so Latchkey and plain Curator
 * mutexes on the same path exclude each other. The lowest node holds the lock; every other waiter
 * watches only its predecessor, so a release wakes one waiter, and grants follow creation order (FIFO).
 * The server's container manager deletes a lock name's node once its last lock node is gone, so a
 * million names over time leave no million empty nodes. Semaphores live apart, under
 * {@code <base>/@semaphores} (see the package documentation).
 *
 * <p><b>The recipe is Latchkey's own</b> ({@code Acquisition}), not {@code InterProcessMutex}: that
 * mutex keys its reentrancy by thread and refuses {@code release()} from another thread (contract rule
 * 4, docs/contract.md), so it needed a worker thread per acquire, and it confirmed a grant with a
 * {@code sync} and an {@code exists} of its own. Latchkey's recipe runs on the caller's thread,
 * confirms the grant from the create's own {@code Stat}, and deletes the node from whatever thread
 * closes the lease; the shared layer does reentrancy. An uncontended lock and unlock is three requests
 * (create, getChildren, delete), two of them writes; a waiter granted after waiting adds one
 * {@code sync}, sent with its last children read.

 * <p><b>Lease, tick and failover (contract rules 5 and 7).</b> A ZooKeeper server expires sessions in
 * buckets of one {@code tickTime}: a session silent since {@code t} ends between {@code t + timeout} and
 * {@code t + timeout + tick}. So that {@code lease} stays the failover bound, connect first runs one
 * handshake of its own ({@code ServerProbe}) that learns the server's minimum session timeout ({@code 2 ×
 * tickTime} by default; the tick is taken as half of it, since {@code tickTime} itself is not readable
 * by a client) and asks for a session of {@code lease − tick}. A killed holder's lock is then free
 * within {@code lease} plus the waiter's wake-up. A lease below the minimum session timeout plus a tick
 * ({@code 3 × tickTime}: 1500 ms at a 500 ms tick, 6 s at the default 2 s), or not longer than
 * {@code timeout + safetyMargin}, is refused at connect with a message naming the minimum. A lease
 * above the server's {@code maxSessionTimeout} ({@code 20 × tickTime} by default) is clamped by the
 * server: failover is then quicker than {@code lease}, and it is logged. The validity deadline counts
 * the session timeout the server granted from the send time of the request that confirmed the node,
 * minus {@code safetyMargin}: never later than the server's expiry. See {@link ZooKeeperLease} for the
 * evidence; {@code SUSPENDED} lets the validity deadline run out, {@code LOST} ends the lease.
 * <b>Fencing (contract rule 8):</b> the lock node's {@code czxid}.
 *
 * <p><b>Bounds.</b> The probe also tells, within {@code timeout}, why no server could be reached: an
 * unresolvable host, a refused port, a listener that accepts but never answers (a paused server), a
 * server that closes the connection (no quorum). The probe and Curator's session share that one
 * {@code timeout} (only this JVM's own time is added to it: loading the client's classes, on a thread
 * of its own while the probe runs, building and starting Curator, and, while Curator has never
 * connected in this JVM, the start-up allowance of {@link Startup}), so a server that answers the
 * probe and then freezes fails connect within {@code timeout} too, plus that allowance in a cold JVM. Closing a Curator
 * client whose server stopped answering would wait out ZooKeeper's own connection timeout; it is cut
 * off at {@code timeout}. An acquire waits for each answer at most until its deadline plus
 * {@code timeout}.
 *
 * <p><b>Waiters and expired sessions.</b> A waiter whose holder's session expired waits on the
 * holder's node like on any other, and is granted the lock once the server deletes that node with the
 * session, within its wait. A waiter whose own session expired while it waited (its process was
 * stopped, its network cut) finds its node gone, or still there under the old session: it deletes what
 * is left and queues again in the new session, within its wait; only if the wait is over by then is it
 * told that this process was paused (when it was) or that the session ended.
 *
 * <p><b>Security.</b> With a username and password, the client authenticates with the {@code digest}
 * scheme and creates the base path and all lock nodes with an ACL granting everything to that identity
 * only, so a client without the credentials can neither create nor delete lock nodes there.
 *
 * <p>Thread-safety: stateless; clients it creates are thread-safe.
 */
public final class ZooKeeperLockProvider implements LockProviderFactory {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockProvider.class);
    /** Whether Curator has connected in this JVM yet: the start-up allowance of connect, see {@link Startup}. */
    private static final Startup STARTUP = new Startup();
    static final String BACKEND = "zookeeper";

    /** Found by {@link java.util.ServiceLoader}; does nothing. */
    public ZooKeeperLockProvider() {
    }

    /**
     * A lock client on the application's own, started Curator client, which it does not close. A
     * session's timeout is fixed when the application builds its client, so here the session decides
     * how long a crashed holder keeps the lock: the session timeout the server granted plus one tick.
     * {@code lease} must be at least that, or this refuses with a message naming both (build the client
     * with {@code sessionTimeoutMs(lease − tick)} to match); a longer {@code lease} is kept as an upper
     * bound. The validity deadline comes from the granted session timeout and {@code safetyMargin};
     * {@code timeout} bounds every call; {@code namespace} prefixes {@code basePath}. An authenticated
     * {@code curator} (digest) needs the same credentials in {@code options} so that the lock nodes get
     * the matching ACL.
     *
     * @param basePath the base path, or {@code null} for {@code /latchkey}; the namespace option prefixes it
     * @throws IllegalArgumentException if {@code curator} is not started, the base path is illegal, or
     *     {@code lease} is shorter than the session gives
     * @throws LockBackendUnavailableException if ZooKeeper cannot be reached within the timeout option
     */
    public static LockClient client(CuratorFramework curator, String basePath, LockOptions options) {
        Objects.requireNonNull(curator, "curator");
        LockClients.checkOptions(new ZooKeeperLockProvider(), options, "the application's Curator client");
        if (curator.getState() != CuratorFrameworkState.STARTED) {
            throw new IllegalArgumentException("the Curator client must be started before Latchkey uses it; state: "
                    + curator.getState());
        }
        String shown = "zookeeper://" + curator.getZookeeperClient().getCurrentConnectionString();
        String base = LockPaths.basePath(basePath, options.namespace());
        Deadline deadline = Deadline.after(options.timeout());
        ZooKeeperBackend backend = open(curator, false, base, options, shown, deadline);
        try {
            ServerProbe.Answer answer = probe(Sessions.hostsOf(curator.getZookeeperClient().getCurrentConnectionString()), deadline,
                    shown, options);
            Duration session = Sessions.negotiated(curator);
            Duration keeps = session.plus(answer.tick());
            if (keeps.compareTo(options.lease()) > 0) {
                throw new IllegalArgumentException("lease=" + Durations.format(options.lease()) + " is shorter than what"
                        + " the application's Curator client at " + shown + " gives: its session timeout is "
                        + Durations.format(session) + " and the server expires sessions up to one tick ("
                        + Durations.format(answer.tick()) + ") late, so a crashed holder keeps the lock up to "
                        + Durations.format(keeps) + "; set lease to at least that, or build the Curator client with"
                        + " sessionTimeoutMs(lease - tick)");
            }
        } catch (RuntimeException e) {
            backend.close();
            throw e;
        } catch (Exception e) {
            backend.close();
            throw unavailable(shown, options, e);
        }
        return LockClients.of(BACKEND, backend, options);
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
        String shown = uri.redacted();
        if (options.username() != null && options.password() == null) {
            throw new IllegalArgumentException("zookeeper user '" + options.username() + "' has no password: digest"
                    + " authentication needs both, as in zookeeper://user:password@host:2181" + base);
        }
        Deadline deadline = Deadline.after(options.timeout());
        Thread preloading = Sessions.preload();
        ServerProbe.Answer answer;
        try {
            answer = probe(uri.hosts(), deadline, shown, options);
        } catch (Exception e) {
            throw unavailable(shown, options, e);
        }
        Duration tick = answer.tick();
        Duration shortest = answer.minSessionTimeout().plus(tick);
        if (options.lease().compareTo(shortest) < 0) {
            throw new IllegalArgumentException("lease=" + Durations.format(options.lease()) + " is too short for"
                    + " zookeeper at " + shown + ": its minimum session timeout is "
                    + Durations.format(answer.minSessionTimeout()) + " (two ticks of " + Durations.format(tick)
                    + ") and it expires sessions up to one tick late, so the shortest lease it keeps is "
                    + Durations.format(shortest) + "; lengthen the lease");
        }
        // sessions end up to one tick after their timeout: ask for one tick less, so that lease stays the bound
        Duration session = options.lease().minus(tick);
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(uri.hosts().stream().map(LockUri.HostAndPort::toString).collect(Collectors.joining(",")))
                .sessionTimeoutMs(millis(session))
                .connectionTimeoutMs(millis(options.timeout()))
                // Curator retries a request lost with the connection until it is answered; every caller of this
                // backend waits at most its own bound and leaves the request behind. A policy that gives up is
                // not harmless here: each request Curator gives up on with a connection loss makes it report
                // SUSPENDED, even when the connection came back in the meantime, and nothing reports RECONNECTED
                // then; a session timeout later Curator expires that live session itself (its simulated session
                // expiration), losing every lock and queue place of the client, and the requests that failed with
                // it do the same again. After a cut longer than the session that never stopped: the protected
                // creates of acquires retried during the cut leave Curator a search for their nodes that retries
                // itself without end, and every new session was expired a session timeout after it began.
                .retryPolicy(new RetryForever(Math.max(50, Math.min(1000, millis(options.timeout()) / 10))))
                // the ensemble's own view of its addresses is not what this client reaches (containers, NAT)
                .ensembleTracker(false)
                .threadFactory(DaemonThreads.factory("latchkey-zookeeper-curator"));
        if (options.username() != null) {
            builder.authorization("digest", (options.username() + ":" + options.password()).getBytes(StandardCharsets.UTF_8));
        }
        // The server gets the timeout once, the probe and the session together: a server that answered the
        // probe and then froze fails connect within the timeout (plus the start-up allowance while Curator
        // has never connected in this JVM, see Startup). What this JVM spends loading ZooKeeper's and
        // Curator's classes and building and starting Curator is its own and not charged.
        long building = System.nanoTime();
        try {
            Sessions.awaitPreload(preloading, options.timeout());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException(null, "interrupted while connecting to zookeeper at " + shown, e);
        }
        CuratorFramework curator = builder.build();
        curator.start();
        // the session's handshake and the base path's requests are answered in Curator's and ZooKeeper's
        // threads, which a cold JVM is still loading classes in: the start-up allowance covers that
        Deadline connecting = deadline.plus(Duration.ofNanos(System.nanoTime() - building)).plus(STARTUP.allowance());
        ZooKeeperBackend backend = open(curator, true, base, options, shown, connecting);
        STARTUP.connected();
        long negotiated = Sessions.negotiated(curator).toMillis();
        if (negotiated != session.toMillis()) {
            log.info("zookeeper at {} negotiated a session timeout of {} for a requested {} (lease {} minus a tick of {}):"
                    + " locks of this client live up to {} after their holder falls silent", shown,
                    Durations.format(Duration.ofMillis(negotiated)), Durations.format(session),
                    Durations.format(options.lease()), Durations.format(tick),
                    Durations.format(Duration.ofMillis(negotiated).plus(tick)));
        }
        return backend;
    }

    private static ServerProbe.Answer probe(List<LockUri.HostAndPort> hosts, Deadline deadline, String shown,
            LockOptions options) throws ServerProbe.NoAnswer {
        try {
            return ServerProbe.probe(hosts, deadline);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException(null, "interrupted while connecting to zookeeper at " + shown, e);
        }
    }

    private static LockBackendUnavailableException unavailable(String shown, LockOptions options, Exception e) {
        return new LockBackendUnavailableException(null, "could not connect to zookeeper at " + shown + " within the"
                + " timeout option (" + Durations.format(options.timeout()) + "): " + e.getMessage(), e);
    }

    private static ZooKeeperBackend open(CuratorFramework curator, boolean owned, String base, LockOptions options,
            String shown, Deadline deadline) {
        try {
            if (!curator.blockUntilConnected((int) Math.max(1, deadline.remainingMillis()), TimeUnit.MILLISECONDS)) {
                throw new LockBackendUnavailableException(null, (owned ? "could not connect to zookeeper at "
                        : "the application's Curator client is not connected to zookeeper at ") + shown + " within the"
                        + " timeout option (" + Durations.format(options.timeout()) + ") although the server answered"
                        + " a handshake; check that the ensemble is up and has a quorum", null);
            }
            List<ACL> acl = acl(options);
            CompletableFuture<Void> prepared = CompletableFuture.runAsync(() -> {
                try {
                    ensureBasePath(curator, base, acl, shown);
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            }, r -> DaemonThreads.factory("latchkey-zookeeper-connect").newThread(r).start());
            try {
                prepared.get(Math.max(1, deadline.remainingNanos()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                throw new LockBackendUnavailableException(null, "zookeeper at " + shown + " did not answer while the base"
                        + " path '" + base + "' was prepared, within the timeout option ("
                        + Durations.format(options.timeout()) + "); check that the ensemble is up and reachable", e);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
            }
            return new ZooKeeperBackend(curator, owned, base, acl, options);
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
            Sessions.closeWithin(curator, Duration.ZERO);
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
