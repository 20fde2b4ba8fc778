package io.latchkey.zookeeper;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.Pauses;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;

/**
 * The request plumbing that one acquisition of a lock ({@link Acquisition}) and one of a permit
 * ({@link PermitAcquisition}) share: its ephemeral sequential node while it has one, and the node's
 * deletion if the caller leaves without a grant; requests sent in the background and their answers
 * awaited at most until the caller's deadline plus the {@code timeout} option; watches and the waits
 * they end; a connection failure tried again within the wait; a node of an expired session deleted and
 * created again; failures translated into the API's exceptions, told as a pause of this process if it
 * was paused. What to read and when a node is granted is the caller's {@link Recipe}; messages use its
 * {@link Words}, and log lines go to its logger.
 *
 * <p>Not thread-safe (one caller, whose thread runs {@link #run}); {@link #wake} may be called from any
 * thread (watchers on ZooKeeper's event thread, the backend's connection listener and close).
 */
final class ZnodeRequests implements ZooKeeperBackend.Waiter {

    /** The pause before trying again after this client's connection failed. */
    private static final long RETRY_PAUSE_MS = 50;
    /** How often a waiting thread wakes, to notice this process's pauses and the backend's close. */
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final ZooKeeperBackend backend;
    private final Logger log;
    private final String name;
    private final Words words;
    private final Deadline deadline;
    private final Deadline limit;
    private final Pauses pauses;
    private final Runnable checkOpen;
    /** What bounds each answer, for messages: "the wait plus the timeout option", or for a read "the timeout option". */
    private final String bound;
    private final Watcher predecessorWatch = event -> wake();
    final ChildrenWatch childrenWatch = new ChildrenWatch();
    private boolean woken; // guarded by this

    /** This acquisition's node and its owner session, while it has one. */
    String node;
    long owner;

    /**
     * How messages name an acquisition: {@code subject} ("lock 'x'", "semaphore 'x'") at {@code where};
     * its {@code node} ("node", "waiter"); what it could not do ({@code acquiring}: "acquire", "acquire a
     * permit of"); how a failure's message begins ({@code notAcquired}: "lock 'x' (...) was not acquired: ");
     * and what a pause interrupted ({@code waitingFor}: "waiting for the lock").
     */
    record Words(String subject, String where, String node, String acquiring, String notAcquired,
            String waitingFor) {
    }

    /**
     * What a lock or a semaphore does with its node, called by {@link ZnodeRequests#run} on the caller's
     * thread. A {@link KeeperException} of any step ends the acquisition, unless it is a connection failure
     * before the deadline: then the step is tried again after a short pause.
     */
    interface Recipe<T> {

        /**
         * Creates this acquisition's node ({@link ZnodeRequests#create}, then {@link ZnodeRequests#created});
         * false if it must be created again.
         */
        boolean enqueue() throws KeeperException, InterruptedException;

        /**
         * Looks at the queue with this acquisition's node in it: the grant, or null, either with
         * {@link ZnodeRequests#node} null to queue again at once, or with the node still there to wait
         * ({@link #awaitChange}) unless the wait is over.
         */
        T look() throws KeeperException, InterruptedException;

        /** Waits for a change that may admit this node, or returns at once to look again. */
        void awaitChange() throws KeeperException, InterruptedException;
    }

    /**
     * @param log the recipe's logger, which this class's log lines use too
     * @param checkOpen throws if the backend is closed, naming what was not acquired
     */
    ZnodeRequests(ZooKeeperBackend backend, Logger log, String name, Words words, Deadline deadline,
            Runnable checkOpen) {
        this(backend, log, name, words, deadline, checkOpen, "the wait plus the timeout option");
    }

    /**
     * The plumbing of reads that wait for nothing ({@link LockInspection}): each answer is awaited at
     * most the {@code timeout} option from now; {@link #run} is not for them.
     */
    static ZnodeRequests forReads(ZooKeeperBackend backend, Logger log, String name, Words words, Runnable checkOpen) {
        return new ZnodeRequests(backend, log, name, words, Deadline.after(Duration.ZERO), checkOpen,
                "the timeout option");
    }

    private ZnodeRequests(ZooKeeperBackend backend, Logger log, String name, Words words, Deadline deadline,
            Runnable checkOpen, String bound) {
        this.backend = backend;
        this.bound = bound;
        this.deadline = deadline;
        this.limit = deadline.callBound(backend.timeout);
        this.pauses = Pauses.until(limit);
        this.log = log;
        this.name = name;
        this.words = words;
        this.checkOpen = checkOpen;
    }

    /** The grant, or {@code null} if the recipe's node was not admitted until the deadline. */
    <T> T run(Recipe<T> recipe) throws InterruptedException {
        backend.waiting.add(this);
        try {
            return queue(recipe);
        } finally {
            backend.waiting.remove(this);
            childrenWatch.waiter = null;
            if (node != null) {
                // not granted: this node would hold up the waiters behind it until the session ends
                ZooKeeperLease.deleteInBackground(backend.client, node, name);
            }
        }
    }

    private <T> T queue(Recipe<T> recipe) throws InterruptedException {
        boolean first = true;
        KeeperException lastFailure = null; // of a request tried again; null after a lost node
        while (true) {
            checkOpen.run();
            try {
                if (node == null) {
                    if (!first && deadline.hasPassed()) {
                        if (lastFailure != null) {
                            throw failure(lastFailure);
                        }
                        throw unavailable(new LockBackendUnavailableException(name, words.notAcquired()
                                + "this client's zookeeper session ended while it waited, and the wait was over"
                                + " before it could queue again", null));
                    }
                    first = false;
                    lastFailure = null;
                    if (!recipe.enqueue()) {
                        continue;
                    }
                }
                if (expired()) {
                    continue;
                }
                T granted = recipe.look();
                if (granted != null) {
                    return granted;
                }
                if (node == null) {
                    continue; // the node is gone or was given up: queue again
                }
                if (deadline.hasPassed()) {
                    return null;
                }
                recipe.awaitChange();
            } catch (KeeperException e) {
                if (!ZooKeeperBackend.unreachable(e) || deadline.hasPassed()) {
                    throw failure(e);
                }
                lastFailure = e;
                log.debug("{} ({}): {}; trying again within the wait", words.subject(), words.where(), e.toString());
                resetWake();
                awaitWake(Deadline.after(Duration.ofMillis(RETRY_PAUSE_MS)));
            }
        }
    }

    /** Whether the node belongs to a session that has ended; then it is deleted, to be created again. */
    boolean expired() {
        if (owner == backend.sessionId()) {
            return false;
        }
        log.debug("{}: {} {} {}; queueing again", words.subject(), words.node(), node,
                "belongs to the expired session 0x" + Long.toHexString(owner));
        ZooKeeperLease.deleteInBackground(backend.client, node, name);
        node = null;
        return true;
    }

    /** A request's failure as the caller gets it: see {@link ZooKeeperBackend#failure}, told as a pause if there was one. */
    RuntimeException failure(KeeperException e) {
        RuntimeException failure = backend.failure(name, words.subject(), words.where(), words.acquiring(), e);
        if (failure instanceof LockBackendUnavailableException u) {
            return unavailable(u);
        }
        return failure;
    }

    /** {@code failure}, or the same told as a pause of this process if it was paused while acquiring. */
    private LockBackendUnavailableException unavailable(LockBackendUnavailableException failure) {
        return pauses.explain(failure, name, words.notAcquired(), words.waitingFor(), "zookeeper");
    }

    /**
     * Sends {@code create}, the request that creates this acquisition's node, and awaits its answer. If
     * the caller leaves first, a node created after that moment would hold up the queue for nobody: it
     * is deleted once created, after telling {@code late} its path.
     */
    CuratorEvent create(Request create, String doing, Consumer<String> late)
            throws KeeperException, InterruptedException {
        CompletableFuture<CuratorEvent> sent = send(create);
        try {
            return await(sent, doing);
        } catch (InterruptedException | RuntimeException e) {
            sent.thenAccept(answer -> {
                if (ok(answer)) {
                    late.accept(answer.getName());
                    ZooKeeperLease.deleteInBackground(backend.client, answer.getName(), name);
                }
            });
            throw e;
        }
    }

    /**
     * Takes the node of a create's answer as this acquisition's, with its owner session: its Stat, or
     * null if it is gone and must be created again ({@code doing} names the request that looks for it).
     */
    Stat created(CuratorEvent created, String doing) throws KeeperException, InterruptedException {
        check(created);
        node = created.getName();
        Stat stat = created.getStat();
        if (stat == null) {
            // Curator found the node by its uuid after a lost connection, without its Stat
            stat = syncedStat(node, doing);
            if (stat == null) {
                node = null;
                return null;
            }
        }
        owner = stat.getEphemeralOwner();
        return stat;
    }

    /**
     * The node's Stat from a {@code sync} and an {@code exists} in one round trip, or {@code null} if it is
     * gone: for a node Curator's protected mode found again without its Stat.
     */
    private Stat syncedStat(String path, String doing) throws KeeperException, InterruptedException {
        CompletableFuture<CuratorEvent> synced = send(cb -> backend.client.sync().inBackground(cb).forPath(path));
        CompletableFuture<CuratorEvent> exists = send(cb -> backend.client.checkExists().inBackground(cb).forPath(path));
        await(synced, doing);
        CuratorEvent e = await(exists, doing);
        if (code(e) == KeeperException.Code.NONODE) {
            return null;
        }
        if (!ok(e)) {
            throw KeeperException.create(code(e), path);
        }
        return e.getStat();
    }

    /**
     * A {@code sync} and the children of {@code path} in one round trip (ZooKeeper answers a session's
     * requests in order), so that a follower behind the leader does not show a node already gone before the
     * read began; {@code null} if the path does not exist. Read-only, no watch.
     */
    CuratorEvent syncedChildren(String path, String doing) throws KeeperException, InterruptedException {
        CompletableFuture<CuratorEvent> synced = send(cb -> backend.client.sync().inBackground(cb).forPath(path));
        CompletableFuture<CuratorEvent> listed = send(cb -> backend.client.getChildren().inBackground(cb).forPath(path));
        CuratorEvent s = await(synced, doing);
        if (!ok(s) && code(s) != KeeperException.Code.NONODE) {
            throw KeeperException.create(code(s), path);
        }
        CuratorEvent read = await(listed, doing);
        if (code(read) == KeeperException.Code.NONODE) {
            return null;
        }
        check(read);
        return read;
    }

    /** The children of {@code read} that {@code sequence} finds a sequence in, lowest sequence first. */
    static List<String> bySequence(CuratorEvent read, Function<String, String> sequence) {
        List<String> nodes = new ArrayList<>();
        for (String child : read.getChildren()) {
            if (sequence.apply(child) != null) {
                nodes.add(child);
            }
        }
        nodes.sort(Comparator.comparing(sequence));
        return nodes;
    }

    /**
     * Starts a granted lease, releasing it if that fails. The session's next probe sets the watch on the
     * lease's node ({@link SessionProbe}): a lease released before it sends nothing but its delete.
     */
    <L extends ZooKeeperLease> L hold(L lease, long evidenceAt) {
        try {
            lease.start(evidenceAt);
        } catch (RuntimeException e) {
            lease.releaseQuietly();
            throw e;
        }
        return lease;
    }

    /**
     * Watches the node ahead and waits until it changes, the deadline or a wake-up; at once if the node
     * is already gone or this client's session changed meanwhile.
     */
    void awaitDeparture(String ahead, String doing) throws KeeperException, InterruptedException {
        // a session that changed meanwhile, with no wake-up left to tell: look again at once
        if (watch(ahead, doing) && owner == backend.sessionId()) {
            awaitWake();
        }
    }

    /** Watches the predecessor; false if it is already gone (then no watch is left behind). */
    private boolean watch(String predecessor, String doing) throws KeeperException, InterruptedException {
        CuratorEvent read = await(send(cb -> backend.client.getData().usingWatcher(predecessorWatch).inBackground(cb)
                .forPath(predecessor)), doing);
        if (code(read) == KeeperException.Code.NONODE) {
            return false;
        }
        check(read);
        return true;
    }

    @Override
    public void wake() {
        synchronized (this) {
            woken = true;
            notifyAll();
        }
    }

    /** Forgets the wake-ups so far: a wait that follows ends only at a later one. */
    void resetWake() {
        synchronized (this) {
            woken = false;
        }
    }

    /** Waits for a wake-up, at most until the deadline. */
    void awaitWake() throws InterruptedException {
        awaitWake(deadline);
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

    /**
     * The answer, waited for at most until the caller's deadline plus the timeout option, waking every
     * tick to notice this process's pauses and the backend's close; a silence past that is unavailability
     * (told as a pause if there was one). {@code doing} says what the request was for ("read the queue of").
     */
    <T> T await(CompletableFuture<T> answer, String doing)
            throws KeeperException, InterruptedException {
        while (true) {
            long nap = Math.min(TICK_NANOS, limit.remainingNanos());
            if (nap <= 0) {
                throw unavailable(new LockBackendUnavailableException(name, "zookeeper did not answer within "
                        + bound + " (" + Durations.format(backend.timeout) + ") while trying to "
                        + doing + " " + words.subject() + " (" + words.where() + "); check that the ensemble is up and"
                        + " reachable", null));
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
                throw backend.failure(name, words.subject(), words.where(), doing, e.getCause());
            }
        }
    }

    static void check(CuratorEvent event) throws KeeperException {
        if (!ok(event)) {
            throw KeeperException.create(code(event), event.getPath());
        }
    }

    static boolean ok(CuratorEvent event) {
        return code(event) == KeeperException.Code.OK;
    }

    static KeeperException.Code code(CuratorEvent event) {
        return KeeperException.Code.get(event.getResultCode());
    }

    /**
     * The watch a semaphore's children reads leave, for a waiter that waits for the children to change:
     * it costs no request of its own. A lock's reads leave none: its waiter watches the node ahead of it,
     * and its holder its own node ({@link ZooKeeperLease#watchFor}).
     */
    static final class ChildrenWatch implements Watcher {
        final AtomicInteger fires = new AtomicInteger();
        /** The waiting semaphore acquisition, woken by a change. */
        volatile Runnable waiter;

        @Override
        public void process(WatchedEvent event) {
            if (event.getType() == Event.EventType.None) {
                return; // a connection event, not a change
            }
            fires.incrementAndGet();
            Runnable w = waiter;
            if (w != null) {
                w.run();
            }
        }
    }
}
