package io.latchkey.zookeeper;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.Pauses;
import java.util.function.UnaryOperator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition of a lock, run on the caller's thread: the lock recipe on ephemeral sequential nodes.
 * Not thread-safe (one caller); its watchers may fire on ZooKeeper's event thread.
 *
 * <p><b>The recipe.</b> Create an ephemeral sequential node {@code <lock path>/_c_<uuid>-lock-<seq>}
 * (Curator's protected mode: after a lost connection Curator finds the node by its uuid rather than
 * create a second one), then read the lock path's children. The lowest {@code lock-} node holds the
 * lock; every other waiter watches only its predecessor (with {@code getData}, which leaves no watch
 * on a node that is already gone), so a release wakes one waiter. Node names are those of Curator's
 * {@code InterProcessMutex}, so plain Curator mutexes on the same path exclude Latchkey's and the other
 * way round. Uncontended, a lock and unlock is three requests: create, getChildren, delete.
 *
 * <p><b>Evidence for rule 7 without a {@code sync}.</b> The create is a write: the leader checks the
 * session when it orders the create, and the answer carries the node's {@link Stat}. So a create
 * answered with a node owned by this client's current session proves that the session was alive at
 * the leader after the create was sent: the validity deadline starts from that send time, and the
 * fencing token is the node's {@code czxid} from the same Stat. The getChildren that follows is a read
 * a follower answers, possibly behind the leader; it cannot hide a lower node, since every lower node
 * was created before ours and the follower has applied our create before it answers our read; staleness
 * can only show a node already deleted, which makes this waiter wait, never grants wrongly. What the
 * former {@code sync} before an {@code exists} guarded against, a follower's stale read taken as proof
 * that the session is alive, therefore remains only for a waiter granted after waiting: its proof is
 * not the old create but a {@code sync} sent, in the same round trip, just before its getChildren.
 *
 * <p><b>Expired sessions.</b> A predecessor left by a holder whose session expired is waited on like
 * any other: the server deletes it with the session, and the watch wakes this waiter. When this
 * client's own session expired while it waited (its process paused, its network cut), its node is gone,
 * or still there under the old session while the server catches up: either way the acquisition deletes
 * what is left of it and creates a node again in the new session, within the caller's wait.
 *
 * <p><b>Bounds.</b> Every request is sent in the background and awaited at most until the caller's
 * deadline plus the {@code timeout} option; a connection failure before the deadline is retried after
 * a short pause. A node the caller no longer waits for (deadline, interrupt, failure) is deleted with
 * Curator's guaranteed delete, including one whose create is answered only after the caller left.
 */
final class Acquisition implements ZooKeeperBackend.Waiter {

    private static final Logger log = LoggerFactory.getLogger(Acquisition.class);
    /** The node name's part before the sequence number, as Curator's {@code InterProcessMutex} names it. */
    static final String LOCK_NODE_PREFIX = "lock-";
    /** The pause before trying again after this client's connection failed. */
    private static final long RETRY_PAUSE_MS = 50;
    /** The longest a waiting thread sleeps at once, so that its wake-ups show a pause of this process. */
    /** How often a waiting thread wakes, to notice this process's pauses and the backend's close. */
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final ZooKeeperBackend backend;
    private final String lockName;
    private final String lockPath;
    private final Deadline deadline;
    private final Deadline limit;
    private final LeaseEvidence evidence;
    private final Pauses pauses;
    private final byte[] data;
    private final Watcher predecessorWatch = event -> wake();
    private final ChildrenWatch childrenWatch = new ChildrenWatch();
    private boolean woken; // guarded by this

    /** This acquisition's node, its owner session and czxid, while it has one. */
    private String node;
    private long owner;
    private long czxid;

    Acquisition(ZooKeeperBackend backend, String lockName, Deadline deadline, LeaseEvidence evidence) {
        this.backend = backend;
        this.lockName = lockName;
        this.lockPath = backend.lockPath(lockName);
        this.deadline = deadline;
        this.limit = deadline.plus(backend.timeout);
        this.evidence = evidence;
        this.pauses = Pauses.until(limit);
        this.data = lockName.getBytes(StandardCharsets.UTF_8);
    }

    /** The granted lease, or {@code null} if the lock stayed held until the deadline. */
    BackendLease run() throws InterruptedException {
        backend.waiting.add(this);
        try {
            return queue();
        } finally {
            backend.waiting.remove(this);
            if (node != null) {
                // not granted: this node would hold up the waiters behind it until the session ends
                ZooKeeperLease.deleteInBackground(backend.client, node, lockName);
            }
        }
    }

    private BackendLease queue() throws InterruptedException {
        boolean first = true;
        long evidenceAt = 0; // when the request that proves the node's session alive was sent
        boolean waited = false;
        KeeperException lastFailure = null; // of a request tried again; null after a lost node
        while (true) {
            backend.checkOpen(lockName);
            try {
                if (node == null) {
                    if (!first && deadline.hasPassed()) {
                        if (lastFailure != null) {
                            throw failure(lastFailure);
                        }
                        throw unavailable(new LockBackendUnavailableException(lockName, "lock '" + lockName + "' ("
                                + backend.describe(lockName) + ") was not acquired: this client's zookeeper session"
                                + " ended while it waited, and the wait was over before it could queue again", null));
                    }
                    first = false;
                    evidenceAt = System.nanoTime();
                    lastFailure = null;
                    if (!create()) {
                        continue;
                    }
                    waited = false;
                }
                if (owner != backend.sessionId()) {
                    requeue("belongs to the expired session 0x" + Long.toHexString(owner));
                    continue;
                }
                long checkAt = System.nanoTime();
                int firesBefore = childrenWatch.fires.get();
                List<String> children = waited ? syncedChildren() : children();
                backend.childrenReads.increment();
                String ours = ZKPaths.getNodeFromPath(node);
                if (!children.contains(ours)) {
                    node = null; // gone with this client's expired session
                    log.debug("lock '{}': this client's node {} is gone with its expired session; queueing again",
                            lockName, ours);
                    continue;
                }
                if (owner != backend.sessionId()) {
                    requeue("belongs to the expired session 0x" + Long.toHexString(owner));
                    continue;
                }
                String predecessor = predecessor(children, ours);
                if (predecessor == null) {
                    return grant(waited ? checkAt : evidenceAt, firesBefore);
                }
                waited = true;
                if (deadline.hasPassed()) {
                    return null;
                }
                synchronized (this) {
                    woken = false;
                }
                // a session that changed meanwhile, with no wake-up left to tell: look again at once
                if (watch(ZKPaths.makePath(lockPath, predecessor)) && owner == backend.sessionId()) {
                    awaitWake(deadline);
                }
            } catch (KeeperException e) {
                if (!retriable(e) || deadline.hasPassed()) {
                    throw failure(e);
                }
                lastFailure = e;
                log.debug("lock '{}' ({}): {}; trying again within the wait", lockName, backend.describe(lockName),
                        e.toString());
                synchronized (this) {
                    woken = false;
                }
                awaitWake(Deadline.after(java.time.Duration.ofMillis(RETRY_PAUSE_MS)));
            }
        }
    }

    private RuntimeException failure(KeeperException e) {
        RuntimeException failure = backend.failure(lockName, "acquire", e);
        if (failure instanceof LockBackendUnavailableException u) {
            return unavailable(u);
        }
        return failure;
    }

    /** {@code failure}, or the same told as a pause of this process if it was paused while acquiring. */
    private LockBackendUnavailableException unavailable(LockBackendUnavailableException failure) {
        return pauses.explain(failure, lockName, "lock '" + lockName + "' (" + backend.describe(lockName)
                + ") was not acquired: ", "waiting for the lock", "zookeeper");
    }

    /** Creates this acquisition's node; false if it must be created again. */
    private boolean create() throws KeeperException, InterruptedException {
        CompletableFuture<CuratorEvent> sent = send(cb -> backend.client.create().creatingParentContainersIfNeeded()
                .withProtection().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).withACL(backend.acl, true)
                .inBackground(cb).forPath(ZKPaths.makePath(lockPath, LOCK_NODE_PREFIX), data));
        CuratorEvent created;
        try {
            created = await(sent, "create a node for");
        } catch (InterruptedException | RuntimeException e) {
            // the caller leaves: a node created after this moment would hold the lock for nobody
            sent.thenAccept(late -> {
                if (ok(late)) {
                    log.info("lock '{}': node {} was created after the caller stopped waiting; deleting it", lockName,
                            late.getName());
                    ZooKeeperLease.deleteInBackground(backend.client, late.getName(), lockName);
                }
            });
            throw e;
        }
        check(created);
        node = created.getName();
        Stat stat = created.getStat();
        if (stat == null) {
            // Curator found the node by its uuid after a lost connection, without its Stat
            stat = syncedStat(node);
            if (stat == null) {
                node = null;
                return false;
            }
        }
        owner = stat.getEphemeralOwner();
        czxid = stat.getCzxid();
        return true;
    }

    private BackendLease grant(long evidenceAt, int firesBefore) throws InterruptedException {
        ZooKeeperLease lease = new ZooKeeperLease(backend, lockName, node, czxid, owner, evidence);
        node = null; // the lease owns it now
        try {
            lease.start(evidenceAt);
        } catch (RuntimeException e) {
            lease.releaseQuietly();
            throw e;
        }
        childrenWatch.holder = lease;
        if (childrenWatch.fires.get() != firesBefore) {
            lease.watchNode(); // the children changed since the read that set the watch: it may be spent
        }
        return lease;
    }

    private void requeue(String why) {
        log.debug("lock '{}': node {} {}; queueing again", lockName, node, why);
        ZooKeeperLease.deleteInBackground(backend.client, node, lockName);
        node = null;
    }

    private List<String> children() throws KeeperException, InterruptedException {
        CuratorEvent read = await(send(cb -> backend.client.getChildren().usingWatcher(childrenWatch).inBackground(cb)
                .forPath(lockPath)), "read the queue of");
        check(read);
        return read.getChildren();
    }

    /** A {@code sync} and then the children, in one round trip: ZooKeeper answers a session's requests in order. */
    private List<String> syncedChildren() throws KeeperException, InterruptedException {
        CompletableFuture<CuratorEvent> synced = send(cb -> backend.client.sync().inBackground(cb).forPath(lockPath));
        CompletableFuture<CuratorEvent> read = send(cb -> backend.client.getChildren().usingWatcher(childrenWatch)
                .inBackground(cb).forPath(lockPath));
        CuratorEvent s = await(synced, "read the queue of");
        if (!ok(s) && code(s) != KeeperException.Code.NONODE) {
            throw KeeperException.create(code(s), lockPath);
        }
        CuratorEvent r = await(read, "read the queue of");
        check(r);
        return r.getChildren();
    }

    private Stat syncedStat(String path) throws KeeperException, InterruptedException {
        return syncedStat(backend, path, answer -> await(answer, "confirm the node of"));
    }

    /** A way to wait for an answer within an acquisition's bound. */
    interface Awaiting {
        CuratorEvent await(CompletableFuture<CuratorEvent> answer) throws KeeperException, InterruptedException;
    }

    /**
     * The node's Stat from a {@code sync} and an {@code exists} in one round trip, or {@code null} if it is
     * gone: for a node Curator's protected mode found again without its Stat.
     */
    static Stat syncedStat(ZooKeeperBackend backend, String path, Awaiting awaiting)
            throws KeeperException, InterruptedException {
        CompletableFuture<CuratorEvent> synced = send(cb -> backend.client.sync().inBackground(cb).forPath(path));
        CompletableFuture<CuratorEvent> exists = send(cb -> backend.client.checkExists().inBackground(cb).forPath(path));
        awaiting.await(synced);
        CuratorEvent e = awaiting.await(exists);
        if (code(e) == KeeperException.Code.NONODE) {
            return null;
        }
        if (!ok(e)) {
            throw KeeperException.create(code(e), path);
        }
        return e.getStat();
    }

    /** Watches the predecessor; false if it is already gone (then no watch is left behind). */
    private boolean watch(String predecessor) throws KeeperException, InterruptedException {
        CuratorEvent read = await(send(cb -> backend.client.getData().usingWatcher(predecessorWatch).inBackground(cb)
                .forPath(predecessor)), "watch the holder of");
        if (code(read) == KeeperException.Code.NONODE) {
            return false;
        }
        check(read);
        return true;
    }

    /** The lock node just below {@code ours} in sequence order, or {@code null} if ours is the lowest. */
    static String predecessor(List<String> children, String ours) {
        List<String> nodes = new ArrayList<>();
        for (String child : children) {
            if (sequence(child) != null) {
                nodes.add(child);
            }
        }
        nodes.sort(Comparator.comparing(Acquisition::sequence));
        int at = nodes.indexOf(ours);
        return at <= 0 ? null : nodes.get(at - 1);
    }

    /** The sequence part of a lock node's name ({@code _c_<uuid>-lock-0000000007}), or null if it is no lock node. */
    static String sequence(String child) {
        int at = child.lastIndexOf(LOCK_NODE_PREFIX);
        return at < 0 ? null : child.substring(at + LOCK_NODE_PREFIX.length());
    }

    @Override
    public void wake() {
        synchronized (this) {
            woken = true;
            notifyAll();
        }
    }

    private void awaitWake(Deadline until) throws InterruptedException {
        synchronized (this) {
            while (!woken && !until.hasPassed() && !backend.isClosed()) {
                long nap = Math.min(TICK_NANOS, until.remainingNanos());
                TimeUnit.NANOSECONDS.timedWait(this, nap);
                pauses.woke(nap);
            }
        }
    }

    interface Request {
        void send(BackgroundCallback callback) throws Exception;
    }

    /** Sends a request in the background; completes with its answer. */
    static CompletableFuture<CuratorEvent> send(Request request) {
        CompletableFuture<CuratorEvent> answer = new CompletableFuture<>();
        try {
            request.send((client, event) -> answer.complete(event));
        } catch (Exception e) {
            answer.completeExceptionally(e);
        }
        return answer;
    }

    /** The answer, waited for at most until the caller's deadline plus the timeout option. */
    private CuratorEvent await(CompletableFuture<CuratorEvent> answer, String doing)
            throws KeeperException, InterruptedException {
        return await(backend, answer, limit, pauses, this::unavailable, lockName, "lock '" + lockName + "'",
                backend.describe(lockName), doing, () -> backend.checkOpen(lockName));
    }

    /**
     * An answer about {@code subject} ("lock 'x'", "semaphore 'x'"), waited for at most until
     * {@code limit}, waking every tick to notice this process's pauses and the backend's close; a silence
     * past the limit is the exception {@code explain} makes of it (told as a pause if there was one).
     */
    static CuratorEvent await(ZooKeeperBackend backend, CompletableFuture<CuratorEvent> answer, Deadline limit,
            Pauses pauses, UnaryOperator<LockBackendUnavailableException> explain, String name, String subject,
            String where, String doing, Runnable checkOpen)
            throws KeeperException, InterruptedException {
        while (true) {
            long nap = Math.min(TICK_NANOS, limit.remainingNanos());
            if (nap <= 0) {
                throw explain.apply(new LockBackendUnavailableException(name, "zookeeper did not answer within"
                        + " the wait plus the timeout option (" + Durations.format(backend.timeout) + ") while trying to "
                        + doing + " " + subject + " (" + where + "); check that the ensemble is up and reachable", null));
            }
            try {
                return answer.get(nap, TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                pauses.woke(nap);
                checkOpen.run();
            } catch (ExecutionException e) {
                if (e.getCause() instanceof KeeperException k) {
                    throw k;
                }
                throw backend.failure(name, subject, where, doing, e.getCause());
            }
        }
    }

    private void check(CuratorEvent event) throws KeeperException {
        if (!ok(event)) {
            throw KeeperException.create(code(event), event.getPath());
        }
    }

    static boolean retriable(KeeperException e) {
        return e instanceof KeeperException.ConnectionLossException || e instanceof KeeperException.SessionExpiredException
                || e instanceof KeeperException.OperationTimeoutException
                || e instanceof KeeperException.SessionMovedException;
    }

    static boolean ok(CuratorEvent event) {
        return code(event) == KeeperException.Code.OK;
    }

    static KeeperException.Code code(CuratorEvent event) {
        return KeeperException.Code.get(event.getResultCode());
    }

    /**
     * The watch the lock path's children reads leave: it costs no request of its own, and it is how a
     * holder learns at once that its node was deleted behind its back. On its first change after the
     * grant the holder watches its own node instead ({@link ZooKeeperLease#watchNode}), so later waiters
     * joining cost it nothing.
     */
    static final class ChildrenWatch implements Watcher {
        final AtomicInteger fires = new AtomicInteger();
        volatile ZooKeeperLease holder;
        /** A waiter of a semaphore that waits for the children to change: woken by them. */
        volatile Runnable waiter;

        @Override
        public void process(WatchedEvent event) {
            if (event.getType() == Event.EventType.None) {
                return; // a connection event, not a change
            }
            fires.incrementAndGet();
            ZooKeeperLease h = holder;
            if (h != null) {
                h.watchNode();
            }
            Runnable w = waiter;
            if (w != null) {
                w.run();
            }
        }
    }
}
