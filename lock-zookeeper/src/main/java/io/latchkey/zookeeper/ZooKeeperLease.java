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
 * the watch that notices its loss. Thread-safe; {@link #release()} may come from any thread.
 *
 * <p>Evidence: every quarter of the session timeout the lease sends {@code sync} and then {@code exists}
 * on its node, taking {@link System#nanoTime()} before the {@code sync} is sent. A {@code sync} is
 * answered only after the leader has seen it, and the {@code exists} answer after that (ZooKeeper
 * answers a session's requests in order), so an answer showing the node with this lease's
 * {@code czxid} and this session as its owner proves the session was alive at the servers after that
 * send time; the session, and with it the node, then lives at least the negotiated session timeout
 * from there unless the server hears from the client again. That is reported as
 * {@link LeaseEvidence#confirmed}. {@code SUSPENDED} stops the evidence, so the validity deadline
 * counts down from the last answer; {@code RECONNECTED} probes at once; {@code LOST}, an answer without
 * the node, or the node's deletion seen by the watch report {@link LeaseEvidence#lost}.
 */
final class ZooKeeperLease implements BackendLease {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLease.class);
    /** Set while this class's ZooKeeper callbacks run: releasing there must not wait for another callback. */
    private static final ThreadLocal<Boolean> IN_CALLBACK = new ThreadLocal<>();

    private final ZooKeeperBackend backend;
    private final String lockName;
    private final String node;
    private final LeaseEvidence evidence;
    private final Watcher watcher = this::nodeEvent;
    private final AtomicBoolean released = new AtomicBoolean();
    private final AtomicLong probeSentAt = new AtomicLong(); // 0 when no probe is in flight
    private volatile long czxid;
    private volatile long sessionId;
    private volatile ScheduledFuture<?> renewal;

    ZooKeeperLease(ZooKeeperBackend backend, String lockName, String node, LeaseEvidence evidence) {
        this.backend = backend;
        this.lockName = lockName;
        this.node = node;
        this.evidence = evidence;
    }

    /**
     * Confirms the grant, learns the fencing token, and starts the periodic evidence.
     *
     * @return false if the node Curator granted is not this session's: a node created by an earlier
     *     session of this client that expired while it waited (the server had not yet deleted it when
     *     Curator looked), or already gone. Such a node holds nothing for this session; it is deleted,
     *     and the caller queues again.
     */
    boolean start() throws InterruptedException {
        long sentAt = System.nanoTime();
        Stat stat;
        try {
            stat = probe(true).get(backend.timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw backend.failure(lockName, "confirm the grant of", e.getCause());
        } catch (TimeoutException e) {
            throw new LockBackendUnavailableException(lockName, "zookeeper did not confirm the grant of lock '" + lockName
                    + "' (node " + node + ") within the timeout option (" + Durations.format(backend.timeout)
                    + "); check that the ensemble is up and reachable", e);
        }
        long session = currentSession();
        if (stat == null || stat.getEphemeralOwner() != session) {
            log.debug("lock '{}': node {} was granted but {}; queueing again", lockName, node,
                    stat == null ? "is gone" : "belongs to the expired session 0x" + Long.toHexString(stat.getEphemeralOwner()));
            released.set(true);
            backend.forget(this);
            if (stat != null) {
                deleteInBackground(backend.client, node, lockName);
            }
            return false;
        }
        czxid = stat.getCzxid();
        sessionId = session;
        evidence.confirmed(sentAt, sessionTimeout());
        long every = Math.max(50, sessionTimeout().toMillis() / 4);
        try {
            renewal = backend.renewer.scheduleWithFixedDelay(this::renew, every, every, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("zookeeper lock backend is closed; lock '" + lockName + "' was released", e);
        }
        log.debug("lock '{}' granted: node {}, fencing token (czxid) {}", lockName, node, czxid);
        return true;
    }

    String lockName() {
        return lockName;
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
        CompletableFuture<Void> deleted = deleteInBackground(backend.client, node, lockName);
        if (Boolean.TRUE.equals(IN_CALLBACK.get())) {
            return; // the delete's answer would come on this very thread; Curator keeps retrying it
        }
        try {
            deleted.get(backend.timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw backend.failure(lockName, "release", e.getCause());
        } catch (TimeoutException e) {
            throw new LockBackendUnavailableException(lockName, "zookeeper did not confirm the release of lock '" + lockName
                    + "' (node " + node + ") within the timeout option (" + Durations.format(backend.timeout)
                    + "); Curator keeps trying"
                    + " to delete the node, and it goes with the session at the latest", e);
        }
    }

    void releaseQuietly() {
        try {
            release();
        } catch (RuntimeException e) {
            log.warn("release of lock '{}' (node {}) failed; the node goes with the session", lockName, node, e);
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
        probe(false).whenComplete((stat, error) -> {
            probeSentAt.compareAndSet(now, 0);
            if (error != null) {
                log.debug("probe of lock '{}' (node {}) failed; the validity deadline keeps counting down", lockName, node, error);
            } else if (stat == null) {
                lost("its lock node " + node + " no longer exists", null);
            } else if (stat.getCzxid() != czxid || stat.getEphemeralOwner() != sessionId) {
                lost("its lock node " + node + " now belongs to session 0x" + Long.toHexString(stat.getEphemeralOwner())
                        + ", not 0x" + Long.toHexString(sessionId), null);
            } else {
                inCallback(() -> evidence.confirmed(now, sessionTimeout()));
            }
        });
    }

    /** {@code sync}, then {@code exists} on the node; completes with its stat, or {@code null} if it is gone. */
    private CompletableFuture<Stat> probe(boolean watch) {
        CompletableFuture<Stat> result = new CompletableFuture<>();
        CuratorFramework client = backend.client;
        try {
            client.sync().inBackground((c, synced) -> {
                if (!ok(synced) && code(synced) != KeeperException.Code.NONODE) {
                    result.completeExceptionally(KeeperException.create(code(synced), node));
                    return;
                }
                try {
                    (watch ? c.checkExists().usingWatcher(watcher) : c.checkExists()).inBackground((c2, exists) -> {
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
            lost("its lock node " + node + " was deleted (by its session's expiry or by someone else)", null);
        } else {
            probe(true); // any other change consumed the watch: set it again
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

    private long currentSession() {
        try {
            return backend.client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            throw backend.failure(lockName, "confirm the grant of", e);
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
