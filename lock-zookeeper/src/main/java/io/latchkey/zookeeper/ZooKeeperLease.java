package io.latchkey.zookeeper;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LeaseEvidence;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One held ZooKeeper lock: its ephemeral sequential node, the evidence that keeps its lease valid and
 * the watches that notice its loss. Thread-safe; {@link #release()} may come from any thread.
 *
 * <p>Evidence: the grant itself is the first ({@link Acquisition} explains why the create's own answer,
 * or for a waiter a {@code sync} ahead of its last children read, proves the session alive after a
 * known send time). Then, every quarter of the session timeout, the lease sends {@code sync} and then
 * {@code exists} on its node, taking {@link System#nanoTime()} before the {@code sync} is sent. A
 * {@code sync} is answered only after the leader has seen it, and the {@code exists} answer after that
 * (ZooKeeper answers a session's requests in order), so an answer showing the node with this lease's
 * {@code czxid} and this session as its owner proves the session was alive at the servers after that
 * send time; the session, and with it the node, then lives at least the negotiated session timeout
 * from there unless the server hears from the client again. That is reported as
 * {@link LeaseEvidence#confirmed}. {@code SUSPENDED} stops the evidence, so the validity deadline
 * counts down from the last answer; {@code RECONNECTED} probes at once; {@code LOST}, an answer without
 * the node, or the node's deletion seen by a watch report {@link LeaseEvidence#lost}. The watch is the
 * one the grant's children read left on the lock path (no request of its own); at its first change,
 * or at its first probe if that comes first, the lease watches its own node with {@code exists} (a
 * permit's grant changes its semaphore's children itself, so a permit's node is watched from its first
 * probe).
 */
class ZooKeeperLease implements BackendLease {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLease.class);
    /** Set while this class's ZooKeeper callbacks run: releasing there must not wait for another callback. */
    private static final ThreadLocal<Boolean> IN_CALLBACK = new ThreadLocal<>();
    /** The ways a held node goes on the server without its release, for the message of the loss. */
    private static final String ENDED = "its session expired, or another client ended the grant (a force release, for"
            + " example)";

    private final ZooKeeperBackend backend;
    private final String lockName;
    private final String node;
    private final LeaseEvidence evidence;
    private final Watcher watcher = this::nodeEvent;
    private final AtomicBoolean released = new AtomicBoolean();
    private final AtomicBoolean watchingNode = new AtomicBoolean();
    private final AtomicLong probeSentAt = new AtomicLong(); // 0 when no probe is in flight
    private final long czxid;
    private final long sessionId;
    private volatile ScheduledFuture<?> renewal;

    ZooKeeperLease(ZooKeeperBackend backend, String lockName, String node, long czxid, long sessionId,
            LeaseEvidence evidence) {
        this.backend = backend;
        this.lockName = lockName;
        this.node = node;
        this.czxid = czxid;
        this.sessionId = sessionId;
        this.evidence = evidence;
    }

    /**
     * Reports the grant's evidence and starts the periodic one.
     *
     * @param sentAt {@link System#nanoTime()} before the request whose answer proved the session alive
     */
    void start(long sentAt) {
        backend.adopt(this);
        evidence.confirmed(sentAt, sessionTimeout());
        long every = Math.max(50, sessionTimeout().toMillis() / 4);
        try {
            renewal = backend.renewer.scheduleWithFixedDelay(this::renew, every, every, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("zookeeper lock backend is closed; " + subject() + " was released", e);
        }
        log.debug("{} granted: node {}, fencing token (czxid) {}", subject(), node, czxid);
    }

    /** Watches this lease's own node from now on: once, as the lock path's children changed. */
    void watchNode() {
        if (!released.get() && watchingNode.compareAndSet(false, true)) {
            exists(true).whenComplete(this::checkNode);
        }
    }

    String lockName() {
        return lockName;
    }

    /** What this lease holds, for messages: {@code lock 'x'}. */
    String subject() {
        return "lock '" + lockName + "'";
    }

    /** Where it lives, for messages. */
    String where() {
        return backend.describe(lockName);
    }

    /** The node's {@code czxid}: ZooKeeper's transaction ids are global and only grow, across restarts too. */
    @Override
    public long fencingToken() {
        return czxid;
    }

    /** Schedule slots are recorded in the lock name's node: see {@link SlotRecord}. */
    @Override
    public boolean recordsSlots() {
        return true;
    }

    @Override
    public Optional<Instant> lastCompletedSlot() {
        return SlotRecord.read(backend, lockName, node);
    }

    @Override
    public void recordCompletedSlot(Instant slot) {
        SlotRecord.write(backend, lockName, node, czxid, slot);
    }

    @Override
    public void release() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        stopRenewal();
        CompletableFuture<Void> deleted = deleteNode();
        if (Boolean.TRUE.equals(IN_CALLBACK.get())) {
            return; // the delete's answer would come on this very thread; Curator keeps retrying it
        }
        try {
            deleted.get(backend.timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw backend.failure(lockName, subject(), where(), "release", e.getCause());
        } catch (TimeoutException e) {
            throw new LockBackendUnavailableException(lockName, "zookeeper did not confirm the release of " + subject()
                    + " (node " + node + ") within the timeout option (" + Durations.format(backend.timeout)
                    + "); Curator keeps trying"
                    + " to delete the node, and it goes with the session at the latest", e);
        }
    }

    /** Deletes this lease's node: a lock node's name is never used again, so Curator's guaranteed delete is safe. */
    CompletableFuture<Void> deleteNode() {
        return deleteInBackground(backend.client, node, lockName);
    }

    void releaseQuietly() {
        try {
            release();
        } catch (RuntimeException e) {
            log.warn("release of {} (node {}) failed; the node goes with the session", subject(), node, e);
        }
    }

    /** Deletes a lock node with Curator's guaranteed delete, which retries on connection loss. */
    static CompletableFuture<Void> deleteInBackground(CuratorFramework client, String node, String lockName) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            client.delete().guaranteed().inBackground((c, event) -> {
                KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
                if (code == KeeperException.Code.OK || code == KeeperException.Code.NONODE) {
                    done.complete(null);
                } else {
                    done.completeExceptionally(KeeperException.create(code, node));
                }
            }).forPath(node);
        } catch (Exception e) {
            done.completeExceptionally(e);
        }
        return done;
    }

    void connectionStateChanged(ConnectionState state) {
        if (released.get()) {
            return;
        }
        if (state == ConnectionState.LOST) {
            lost("the zookeeper session expired or was lost, and the server deletes the lock node with it", null);
        } else if (state == ConnectionState.RECONNECTED) {
            probeSentAt.set(0); // whatever was in flight died with the old connection
            renew();
        }
    }

    private void renew() {
        if (released.get()) {
            return;
        }
        long now = System.nanoTime();
        long previous = probeSentAt.get();
        if (previous != 0 && now - previous < 2 * backend.timeout.toNanos()) {
            return; // the last probe is still under way
        }
        if (!probeSentAt.compareAndSet(previous, now)) {
            return;
        }
        // a node no change of its parent's children has got watched yet (a permit's, which its own grant
        // changed) is watched from its first probe on, at no request of its own
        boolean watch = watchingNode.compareAndSet(false, true);
        probe(watch).whenComplete((stat, error) -> {
            probeSentAt.compareAndSet(now, 0);
            if (error != null && watch) {
                watchingNode.set(false);
            }
            if (error != null) {
                log.debug("probe of lock '{}' (node {}) failed; the validity deadline keeps counting down", lockName, node, error);
            } else if (ours(stat, "no longer exists on the server: " + ENDED)) {
                inCallback(() -> evidence.confirmed(now, sessionTimeout()));
            }
        });
    }

    private void checkNode(Stat stat, Throwable error) {
        if (error != null) {
            watchingNode.set(false); // the next change or renewal tries again
            log.debug("watching the node of lock '{}' ({}) failed", lockName, node, error);
        } else {
            ours(stat, "was deleted on the server: " + ENDED);
        }
    }

    /** Whether {@code stat} shows this lease's node; if not, the lease is lost. */
    private boolean ours(Stat stat, String goneReason) {
        if (stat == null) {
            lost("its lock node " + node + " " + goneReason, null);
            return false;
        }
        if (stat.getCzxid() != czxid || stat.getEphemeralOwner() != sessionId) {
            lost("its lock node " + node + " now belongs to session 0x" + Long.toHexString(stat.getEphemeralOwner())
                    + ", not 0x" + Long.toHexString(sessionId), null);
            return false;
        }
        return true;
    }

    /**
     * {@code sync}, then {@code exists} on the node, sent together (a session's requests are answered in
     * order); completes with its stat, or {@code null} if it is gone.
     */
    private CompletableFuture<Stat> probe(boolean watch) {
        CompletableFuture<Stat> synced = new CompletableFuture<>();
        try {
            backend.client.sync().inBackground((c, event) -> {
                if (!ok(event) && code(event) != KeeperException.Code.NONODE) {
                    synced.completeExceptionally(KeeperException.create(code(event), node));
                } else {
                    synced.complete(null);
                }
            }).forPath(node);
        } catch (Exception e) {
            synced.completeExceptionally(e);
        }
        return synced.thenCombine(exists(watch), (s, stat) -> stat);
    }

    /** {@code exists} on the node, watching it if asked; completes with its stat, or {@code null} if it is gone. */
    private CompletableFuture<Stat> exists(boolean watch) {
        CompletableFuture<Stat> result = new CompletableFuture<>();
        CuratorFramework client = backend.client;
        try {
            (watch ? client.checkExists().usingWatcher(watcher) : client.checkExists()).inBackground((c, exists) -> {
                if (ok(exists)) {
                    result.complete(exists.getStat());
                } else if (code(exists) == KeeperException.Code.NONODE) {
                    result.complete(null);
                } else {
                    result.completeExceptionally(KeeperException.create(code(exists), node));
                }
            }).forPath(node);
        } catch (Exception e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    private void nodeEvent(WatchedEvent event) {
        if (released.get() || event.getType() == Watcher.Event.EventType.None) {
            return;
        }
        if (event.getType() == Watcher.Event.EventType.NodeDeleted) {
            lost("its lock node " + node + " was deleted on the server: " + ENDED, null);
        } else {
            exists(true).whenComplete(this::checkNode); // any other change consumed the watch: set it again
        }
    }

    private void lost(String reason, Throwable cause) {
        stopRenewal();
        inCallback(() -> evidence.lost(reason, cause));
    }

    private void stopRenewal() {
        ScheduledFuture<?> r = renewal;
        if (r != null) {
            r.cancel(false);
        }
        backend.forget(this);
    }

    private static void inCallback(Runnable r) {
        Boolean before = IN_CALLBACK.get();
        IN_CALLBACK.set(Boolean.TRUE);
        try {
            r.run();
        } finally {
            if (before == null) {
                IN_CALLBACK.remove();
            }
        }
    }

    /** The negotiated session timeout: how long the servers keep a silent session, and with it the node. */
    private Duration sessionTimeout() {
        try {
            return Duration.ofMillis(backend.client.getZookeeperClient().getZooKeeper().getSessionTimeout());
        } catch (Exception e) {
            return Duration.ZERO; // no connection object: no evidence either
        }
    }

    private static boolean ok(CuratorEvent event) {
        return code(event) == KeeperException.Code.OK;
    }

    private static KeeperException.Code code(CuratorEvent event) {
        return KeeperException.Code.get(event.getResultCode());
    }
}
