package io.latchkey.zookeeper;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.LockBackend;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.PredicateResults;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ZooKeeper {@link LockBackend}: Curator's {@link InterProcessMutex} under one base path, one
 * child path per lock name. Thread-safe.
 *
 * <p>Each acquire runs a mutex on a worker thread of this backend while the caller waits at most its
 * deadline plus the {@code timeout} option, so a Curator call stuck on a dead server never holds the
 * caller longer; a worker that wins the lock after the caller gave up deletes its node at once.
 * Workers come from a pool of at most {@value #ACQUIRE_THREADS} threads, reused and ended after 30
 * seconds idle: the shared layer admits one acquire per lock name at a time, so the bound is the
 * number of distinct names a client acquires at the same moment; one more is refused with a
 * {@link io.latchkey.LockException} that says so. The backend's other threads: one renewal timer,
 * and Curator's own (its event thread and the ZooKeeper client's two). The mutex's node path goes to a {@link ZooKeeperLease}, which releases by deleting that node;
 * see {@link ZooKeeperLockProvider} for why that is sound.
 */
final class ZooKeeperBackend implements LockBackend {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperBackend.class);
    private static final AtomicInteger BACKENDS = new AtomicInteger();
    /** Acquisitions of distinct lock names one client runs at once. */
    static final int ACQUIRE_THREADS = 64;
    /** The pause before queueing again after this client's session expired or its connection failed. */
    private static final long REQUEUE_PAUSE_MS = 50;

    final CuratorFramework client;
    final String basePath;
    final List<ACL> acl;
    final Duration timeout;
    final ScheduledExecutorService renewer;
    private final boolean ownsClient;
    private final ExecutorService acquirers;
    private final Set<ZooKeeperLease> leases = ConcurrentHashMap.newKeySet();
    private final ConnectionStateListener listener = this::stateChanged;
    /** How often a waiter of this backend read the lock's children: once per wake-up; for the herd test. */
    final LongAdder childrenReads = new LongAdder();

    ZooKeeperBackend(CuratorFramework client, boolean ownsClient, String basePath, List<ACL> acl, Duration timeout) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.basePath = basePath;
        this.acl = List.copyOf(acl);
        this.timeout = timeout;
        int id = BACKENDS.incrementAndGet();
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1,
                DaemonThreads.factory("latchkey-zookeeper-" + id + "-renewal"));
        timer.setRemoveOnCancelPolicy(true);
        this.renewer = timer;
        // No queue: a queued acquire would spend its caller's wait doing nothing and then blame the server.
        this.acquirers = new ThreadPoolExecutor(0, ACQUIRE_THREADS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                DaemonThreads.factory("latchkey-zookeeper-" + id + "-acquire"));
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
    public BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        Deadline limit = deadline.plus(timeout);
        PauseWatch pauses = new PauseWatch(timeout);
        while (true) {
            String node = runAttempt(lockName, deadline, limit, pauses);
            if (node == null) {
                return null;
            }
            ZooKeeperLease lease = new ZooKeeperLease(this, lockName, node, evidence);
            leases.add(lease);
            try {
                if (lease.start()) {
                    return lease;
                }
            } catch (RuntimeException | InterruptedException e) {
                lease.releaseQuietly();
                throw e;
            }
            // Curator granted a node of an expired session of this client (see ZooKeeperLease.start): the
            // server deletes it with that session, and this session queues again within the caller's wait
            if (limit.hasPassed()) {
                throw pauses.unavailable(lockName, describe(lockName), null, "the grant of lock '" + lockName
                        + "' went to a node of this client's expired session");
            }
        }
    }

    private String runAttempt(String lockName, Deadline deadline, Deadline limit, PauseWatch pauses)
            throws InterruptedException {
        Attempt attempt = new Attempt(lockName, lockPath(lockName), deadline);
        Future<?> task;
        try {
            task = acquirers.submit(attempt::run);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            if (acquirers.isShutdown()) {
                throw new IllegalStateException("zookeeper lock backend is closed; lock '" + lockName + "' was not acquired", e);
            }
            throw new io.latchkey.LockException(lockName, "lock '" + lockName + "' (" + describe(lockName) + ") was not"
                    + " acquired: this client already runs " + ACQUIRE_THREADS + " acquisitions of other lock names at"
                    + " once, its bound; use another client for more", e);
        }
        try {
            return attempt.await(limit, pauses);
        } finally {
            if (attempt.abandoned()) {
                task.cancel(true);
            }
        }
    }

    void forget(ZooKeeperLease lease) {
        leases.remove(lease);
    }

    private void stateChanged(CuratorFramework c, ConnectionState state) {
        if (state == ConnectionState.SUSPENDED && !leases.isEmpty()) {
            log.warn("connection to zookeeper suspended; locks {} under {} stay valid at most until their validity"
                    + " deadline unless the connection comes back", leases.stream().map(l -> "'" + l.lockName() + "'")
                    .sorted().collect(java.util.stream.Collectors.joining(", ")), basePath);
        }
        for (ZooKeeperLease lease : leases) {
            lease.connectionStateChanged(state);
        }
    }

    /** Maps a failure of a ZooKeeper call about a lock to the exception the caller gets. */
    LockException failure(String lockName, String doing, Throwable e) {
        String where = describe(lockName);
        if (e instanceof KeeperException.NoAuthException) {
            return new LockException(lockName, "not allowed to " + doing + " lock '" + lockName + "' (" + where + "):"
                    + " the base path '" + basePath + "' is protected by an ACL; connect with the username and password"
                    + " that own it (zookeeper://user:password@host:2181" + basePath + ")", e);
        }
        if (e instanceof KeeperException.ConnectionLossException || e instanceof KeeperException.SessionExpiredException
                || e instanceof KeeperException.OperationTimeoutException
                || e instanceof KeeperException.SessionMovedException) {
            return new LockBackendUnavailableException(lockName, "could not " + doing + " lock '" + lockName + "' ("
                    + where + "): zookeeper is not reachable (" + e.getMessage() + "); check that the ensemble is up and"
                    + " reachable", e);
        }
        return new LockException(lockName, "could not " + doing + " lock '" + lockName + "' (" + where + "): " + e, e);
    }

    @Override
    public void close() {
        client.getConnectionStateListenable().removeListener(listener);
        acquirers.shutdownNow();
        renewer.shutdownNow();
        Deadline closing = Deadline.after(timeout); // one round trip for all of it: the session's close request
        try {
            acquirers.awaitTermination(closing.remainingNanos(), TimeUnit.NANOSECONDS);
            renewer.awaitTermination(closing.remainingNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (ownsClient) {
            Sessions.closeWithin(client, closing.remaining());
        }
    }

    /**
     * One acquisition, run on a worker thread; the caller waits for its outcome in {@link #await} and may
     * give up, after which a won lock is released at once.
     */
    private final class Attempt {
        private final String lockName;
        private final String lockPath;
        private final Deadline deadline;
        private boolean done; // guarded by this
        private boolean abandoned; // guarded by this
        private String node; // guarded by this
        private Throwable error; // guarded by this

        Attempt(String lockName, String lockPath, Deadline deadline) {
            this.lockName = lockName;
            this.lockPath = lockPath;
            this.deadline = deadline;
        }

        void run() {
            String won = null;
            Throwable failed = null;
            while (true) {
                Driver driver = new Driver(lockName);
                InterProcessMutex mutex = new InterProcessMutex(client, lockPath, driver);
                try {
                    if (mutex.acquire(deadline.remainingMillis(), TimeUnit.MILLISECONDS)) {
                        won = driver.ourPath;
                    }
                    failed = null;
                    break;
                } catch (Exception e) {
                    failed = e;
                    if (!queueAgain(e, driver.ourPath)) {
                        break;
                    }
                }
            }
            synchronized (this) {
                if (!abandoned) {
                    node = won;
                    error = failed;
                    done = true;
                    notifyAll();
                    return;
                }
            }
            if (won != null) {
                // the caller has gone: nobody will ever release this grant
                log.info("lock '{}' was granted after the caller stopped waiting; releasing {}", lockName, won);
                ZooKeeperLease.deleteInBackground(client, won, lockName);
            }
        }

        /**
         * Whether a failed wait should queue again: when this client's session expired while it waited
         * (its node went with the session: Curator's "NoNode for Sequential path not found"), or the
         * connection failed and came back, within the caller's wait. A node of the old session that is
         * still there is deleted, so that it does not hold up the waiters behind it.
         */
        private boolean queueAgain(Exception e, String oldNode) {
            boolean expired = e instanceof KeeperException.NoNodeException || e instanceof KeeperException.SessionExpiredException;
            boolean connection = e instanceof KeeperException.ConnectionLossException
                    || e instanceof KeeperException.OperationTimeoutException;
            if (!(expired || connection) || deadline.hasPassed() || Thread.currentThread().isInterrupted()) {
                return false;
            }
            log.debug("lock '{}' ({}): waiting failed ({}); queueing again within the wait", lockName, describe(lockName),
                    e.toString());
            if (oldNode != null) {
                ZooKeeperLease.deleteInBackground(client, oldNode, lockName);
            }
            try {
                Thread.sleep(Math.min(REQUEUE_PAUSE_MS, deadline.remainingMillis()));
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                return false;
            }
            return true;
        }

        synchronized String await(Deadline limit, PauseWatch pauses) throws InterruptedException {
            try {
                while (!done) {
                    long left = limit.remainingNanos();
                    if (left <= 0) {
                        abandoned = true;
                        throw pauses.unavailable(lockName, describe(lockName), null, "zookeeper did not answer for lock '"
                                + lockName + "' (" + describe(lockName) + ") within the wait plus the timeout option ("
                                + Durations.format(timeout) + "); check that the ensemble is up and reachable");
                    }
                    long nap = Math.min(left, PauseWatch.TICK_NANOS);
                    TimeUnit.NANOSECONDS.timedWait(this, nap);
                    pauses.woke(nap);
                }
            } catch (InterruptedException e) {
                abandoned = true;
                throw e;
            }
            if (error != null) {
                LockException e = failure(lockName, "acquire", error);
                if (pauses.paused() && e instanceof LockBackendUnavailableException) {
                    throw pauses.unavailable(lockName, describe(lockName), error, e.getMessage());
                }
                throw e;
            }
            return node;
        }

        synchronized boolean abandoned() {
            return abandoned;
        }
    }

    /**
     * Curator's standard driver with the lock node created under this backend's ACL, holding the lock
     * name as data (node names are encoded), and its path remembered; it counts the wake-ups.
     */
    private final class Driver extends StandardLockInternalsDriver {
        private final byte[] data;
        volatile String ourPath;

        Driver(String lockName) {
            this.data = lockName.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String createsTheLock(CuratorFramework c, String path, byte[] lockNodeBytes) throws Exception {
            // container parents: the server deletes a lock name's node once its last lock node is gone
            String created = c.create().creatingParentContainersIfNeeded().withProtection()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).withACL(acl, true).forPath(path, data);
            ourPath = created;
            return created;
        }

        @Override
        public PredicateResults getsTheLock(CuratorFramework c, List<String> children, String sequenceNodeName,
                int maxLeases) throws Exception {
            childrenReads.increment(); // called once per getChildren, i.e. once per wake-up of this waiter
            return super.getsTheLock(c, children, sequenceNodeName, maxLeases);
        }
    }
}
