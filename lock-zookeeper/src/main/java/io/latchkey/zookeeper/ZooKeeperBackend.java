package io.latchkey.zookeeper;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.GrantRecord;
import io.latchkey.spi.HolderStamp;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.PermitLease;
import io.latchkey.spi.ReadWriteBackend;
import io.latchkey.spi.ReadWriteRecords;
import io.latchkey.spi.SemaphoreBackend;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ZooKeeper {@link LockBackend}: a lock recipe on ephemeral sequential nodes ({@link Acquisition})
 * under one base path, one child path per lock name, and semaphores ({@link PermitAcquisition}) in
 * the subtree {@link LockPaths#SEMAPHORES} beside them. Thread-safe.
 *
 * <p>An acquire runs on the caller's thread: its requests go out in the background and it waits for
 * their answers and watches at most its deadline plus the {@code timeout} option, so a request stuck
 * on a dead server never holds the caller longer, and no thread is started per acquire. A granted node
 * goes to a {@link ZooKeeperLease}, which releases by deleting it from whatever thread closes the lease.
 * The backend's threads: one renewal timer, which probes the session for all its leases
 * ({@link SessionProbe}), and Curator's own (its event thread and the ZooKeeper
 * client's two).
 */
final class ZooKeeperBackend implements SemaphoreBackend, ReadWriteBackend {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperBackend.class);
    private static final AtomicInteger BACKENDS = new AtomicInteger();

    final CuratorFramework client;
    final String basePath;
    final List<ACL> acl;
    final Duration timeout;
    /** The holder text each lock node carries as its data: see {@link Acquisition}. */
    final HolderStamp stamp;
    final ScheduledExecutorService renewer;
    private final boolean ownsClient;
    /** The held leases and the one probe of the session that keeps them valid. */
    private final SessionProbe probe;
    /** Acquisitions of locks and permits waiting now: a change of the connection wakes them to look again. */
    final Set<Waiter> waiting = ConcurrentHashMap.newKeySet();
    private final ConnectionStateListener listener = this::stateChanged;
    private volatile boolean closed;
    /**
     * The number of permits read from each semaphore node, with the node's {@code czxid}: written once
     * at the node's creation, it holds for as long as that node lives. The most recently used
     * {@value #PERMITS_REMEMBERED} paths, so that a million names over time cost no million entries.
     */
    private final java.util.LinkedHashMap<String, long[]> permitsRead = new java.util.LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(java.util.Map.Entry<String, long[]> eldest) {
            return size() > PERMITS_REMEMBERED;
        }
    };
    static final int PERMITS_REMEMBERED = 1024;
    /** How often an acquisition of this backend read the lock's children: once per wake-up; for the herd test. */
    final LongAdder childrenReads = new LongAdder();

    ZooKeeperBackend(CuratorFramework client, boolean ownsClient, String basePath, List<ACL> acl, LockOptions options) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.basePath = basePath;
        this.acl = List.copyOf(acl);
        this.timeout = options.timeout();
        this.stamp = new HolderStamp(options);
        int id = BACKENDS.incrementAndGet();
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1,
                DaemonThreads.factory("latchkey-zookeeper-" + id + "-renewal"));
        timer.setRemoveOnCancelPolicy(true);
        this.renewer = timer;
        this.probe = new SessionProbe(this);
        client.getConnectionStateListenable().addListener(listener);
    }

    @Override
    public String describe(String lockName) {
        return "zookeeper path '" + lockPath(lockName) + "'";
    }

    String lockPath(String lockName) {
        return basePath + "/" + LockPaths.nodeName(lockName);
    }

    @Override
    public String describeSemaphore(String name) {
        return "zookeeper path '" + semaphorePath(name) + "'";
    }

    String semaphorePath(String name) {
        return basePath + "/" + LockPaths.SEMAPHORES + "/" + LockPaths.nodeName(name);
    }

    @Override
    public String describeReadWrite(String name) {
        return "zookeeper path '" + readWritePath(name) + "'";
    }

    /** Where read-write lock {@code name}'s nodes live, with the names Curator's {@code InterProcessReadWriteLock} gives them. */
    String readWritePath(String name) {
        return basePath + "/" + LockPaths.READ_WRITE + "/" + LockPaths.nodeName(name);
    }

    @Override
    public BackendLease acquireRead(String name, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        checkOpen(name);
        return new Acquisition(this, name, Acquisition.Mode.READ, deadline, evidence).run();
    }

    @Override
    public BackendLease acquireWrite(String name, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        checkOpen(name);
        return new Acquisition(this, name, Acquisition.Mode.WRITE, deadline, evidence).run();
    }

    /** Reads the held nodes of read-write lock {@code name}, creating nothing: see {@link ReadWriteInspection}. */
    @Override
    public ReadWriteRecords inspectReadWrite(String name) throws InterruptedException {
        return new ReadWriteInspection(this, name).run();
    }

    @Override
    public PermitLease acquirePermit(String name, int permits, Deadline deadline, LeaseEvidence evidence)
            throws InterruptedException {
        if (closed) {
            throw new IllegalStateException("zookeeper lock backend is closed; no permit of semaphore '" + name
                    + "' was acquired");
        }
        return new PermitAcquisition(this, name, permits, deadline, evidence).run();
    }

    /** Reads the slot nodes of semaphore {@code name}, without creating anything: see {@link PermitInspection}. */
    @Override
    public Map<Integer, GrantRecord> inspectPermits(String name, int permits) throws InterruptedException {
        return new PermitInspection(this, name, permits).run();
    }

    /**
     * The number of permits of a semaphore node, by its path, if this backend read it from the node
     * created with {@code czxid}; null otherwise.
     */
    Integer knownPermits(String path, long czxid) {
        synchronized (permitsRead) {
            long[] known = permitsRead.get(path);
            return known != null && known[0] == czxid ? (int) known[1] : null;
        }
    }

    void rememberPermits(String path, long czxid, int permits) {
        synchronized (permitsRead) {
            permitsRead.put(path, new long[] {czxid, permits});
        }
    }

    /** An acquisition waiting for a watch, which a change of the connection or the backend's close wakes too. */
    interface Waiter {
        void wake();
    }

    @Override
    public BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        checkOpen(lockName);
        return new Acquisition(this, lockName, Acquisition.Mode.LOCK, deadline, evidence).run();
    }

    /** Reads the lowest lock node of {@code lockName}, without creating anything: see {@link LockInspection}. */
    @Override
    public Optional<GrantRecord> inspect(String lockName) throws InterruptedException {
        return new LockInspection(this, lockName).run();
    }

    /** Deletes the lowest lock node of {@code lockName}, exactly the one read: see {@link ZooKeeperAdmin}. */
    @Override
    public Optional<GrantRecord> forceRelease(String lockName) throws InterruptedException {
        return new ZooKeeperAdmin(this).forceRelease(lockName);
    }

    /** Reads the base path's children and which of them hold a lock node, creating nothing: see {@link ZooKeeperAdmin}. */
    @Override
    public List<String> list(String prefix, String after, int limit) throws InterruptedException {
        return new ZooKeeperAdmin(this).list(prefix, after, limit);
    }

    void checkOpen(String lockName) {
        if (closed) {
            throw new IllegalStateException("zookeeper lock backend is closed; lock '" + lockName + "' was not acquired");
        }
    }

    boolean isClosed() {
        return closed;
    }

    /** The id of the client's current session, or 0 if it has none. */
    long sessionId() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    /** The negotiated session timeout: how long the servers keep a silent session, and with it its nodes. */
    Duration sessionTimeout() {
        try {
            return Duration.ofMillis(client.getZookeeperClient().getZooKeeper().getSessionTimeout());
        } catch (Exception e) {
            return Duration.ZERO; // no connection object: no evidence either
        }
    }

    /**
     * Keeps {@code lease} valid from the session's probe until {@link #forget}.
     *
     * @throws java.util.concurrent.RejectedExecutionException if the backend is closed
     */
    void adopt(ZooKeeperLease lease) {
        probe.add(lease);
    }

    void forget(ZooKeeperLease lease) {
        probe.remove(lease);
    }

    private void stateChanged(CuratorFramework c, ConnectionState state) {
        Set<ZooKeeperLease> leases = probe.leases();
        if (state == ConnectionState.SUSPENDED && !leases.isEmpty()) {
            log.warn("connection to zookeeper suspended; {} under {} stay valid at most until their validity"
                    + " deadline unless the connection comes back", listed(leases.stream().map(ZooKeeperLease::subject)
                    .sorted().toList()), basePath);
        }
        if (state == ConnectionState.LOST) {
            for (ZooKeeperLease lease : leases) {
                lease.sessionLost();
            }
        } else if (state == ConnectionState.RECONNECTED && !leases.isEmpty()) {
            probe.reconnected();
        }
        for (Waiter a : waiting) {
            a.wake();
        }
    }

    /** How many leases a log line names; a client may hold thousands. */
    static final int LISTED = 10;

    /** The first {@link #LISTED} of {@code subjects}, and how many more there are. */
    static String listed(List<String> subjects) {
        if (subjects.size() <= LISTED) {
            return String.join(", ", subjects);
        }
        return String.join(", ", subjects.subList(0, LISTED)) + " and " + (subjects.size() - LISTED) + " more";
    }

    /** Maps a failure of a ZooKeeper call about a lock to the exception the caller gets. */
    LockException failure(String lockName, String doing, Throwable e) {
        return failure(lockName, "lock '" + lockName + "'", describe(lockName), doing, e);
    }

    /** Maps a failure of a ZooKeeper call about {@code subject} ("lock 'x'", "semaphore 'x'") at {@code where}. */
    LockException failure(String lockName, String subject, String where, String doing, Throwable e) {
        if (e instanceof KeeperException.NoAuthException) {
            return new LockException(lockName, "not allowed to " + doing + " " + subject + " (" + where + "):"
                    + " the base path '" + basePath + "' is protected by an ACL; connect with the username and password"
                    + " that own it (zookeeper://user:password@host:2181" + basePath + ")", e);
        }
        if (unreachable(e)) {
            return new LockBackendUnavailableException(lockName, "could not " + doing + " " + subject + " ("
                    + where + "): zookeeper is not reachable (" + e.getMessage() + "); check that the ensemble is up and"
                    + " reachable", e);
        }
        return new LockException(lockName, "could not " + doing + " " + subject + " (" + where + "): " + e, e);
    }

    /**
     * Whether {@code e} says that the ensemble could not be reached (no answer, the connection or the
     * session lost meanwhile) rather than that it refused the request: the one list of such failures, which
     * an acquire tries again within its wait and {@link #failure} reports as
     * {@link LockBackendUnavailableException}.
     */
    static boolean unreachable(Throwable e) {
        return e instanceof KeeperException.ConnectionLossException || e instanceof KeeperException.SessionExpiredException
                || e instanceof KeeperException.OperationTimeoutException
                || e instanceof KeeperException.SessionMovedException;
    }

    @Override
    public void close() {
        closed = true;
        client.getConnectionStateListenable().removeListener(listener);
        for (Waiter a : waiting) {
            a.wake();
        }
        renewer.shutdownNow();
        Deadline closing = Deadline.after(timeout); // one round trip for all of it: the session's close request
        try {
            renewer.awaitTermination(closing.remainingNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (ownsClient) {
            Sessions.closeWithin(client, closing.remaining());
        }
    }
}
