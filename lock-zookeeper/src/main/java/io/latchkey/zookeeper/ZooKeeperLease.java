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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One held ZooKeeper lock: its ephemeral sequential node, the evidence that keeps its lease valid and
 * the watches that notice its loss. Thread-safe; {@link #release()} may come from any thread.
 *
 * <p>Evidence: the grant itself is the first ({@link Acquisition} explains why the create's own answer,
 * or for a waiter that waited long a {@code sync} ahead of its last children read, proves the session
 * alive after a known send time). Then the backend's one probe of the session confirms every lease
 * that watches its own node ({@link SessionProbe} says why a live session and a watch that has not fired
 * are this lease's evidence), so a client holding many locks sends no request per lock and tick.
 * {@code LOST}, or the node's deletion seen by the watch, or a watch that finds the node gone or someone
 * else's, report {@link LeaseEvidence#lost}. The watch is set by the first probe after the grant, with
 * an {@code exists} sent ahead of its {@code sync}, a quarter of the session timeout after the grant at
 * most: a lock held for less (a contended lock's grants, a short job) costs no request but its create,
 * its read and its delete, and a node deleted behind the holder's back before that probe (a force
 * release) is told by that {@code exists}'s answer. Until then the lease's validity rests on the grant's
 * evidence alone, which no probe extends before the watch is set. A watch fires once: a change
 * other than the deletion (its schedule record written) sets it again at once.
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
    /** Set at the loss: no watch is set again, no confirmation is passed on. */
    private final AtomicBoolean ended = new AtomicBoolean();
    private final Object watchLock = new Object();
    /**
     * Odd while this lease's own node is watched (the {@code exists} that sets the watch sent), even
     * while not; one more at each change, so a probe knows whether the watch it counted is still set.
     */
    private int watch; // guarded by watchLock
    private final long czxid;
    private final long sessionId;

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
     * Reports the grant's evidence and hands the lease to the session's probe.
     *
     * @param sentAt {@link System#nanoTime()} before the request whose answer proved the session alive
     */
    void start(long sentAt) {
        try {
            if (backend.isClosed()) {
                throw new RejectedExecutionException("closed");
            }
            backend.adopt(this);
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("zookeeper lock backend is closed; " + subject() + " was released", e);
        }
        evidence.confirmed(sentAt, backend.sessionTimeout());
        log.debug("{} granted: node {}, fencing token (czxid) {}", subject(), node, czxid);
    }

    /** Watches this lease's own node again: a change other than its deletion spent the watch. */
    void watchNode() {
        try {
            ZooKeeper zk = backend.client.getZookeeperClient().getZooKeeper();
            watchFor(zk, zk.getSessionId());
        } catch (Exception e) {
            log.debug("no zookeeper handle to watch the node of lock '{}' ({}); the next probe does", lockName, node, e);
        }
    }

    /**
     * Watches this lease's own node through {@code zk}, the handle of {@code session}, unless it is
     * watched already; the watch state to confirm against ({@link #isWatching} false: not watched).
     * Sent under the lock, so a probe that reads the state afterwards sends its {@code sync} after it.
     */
    int watchFor(ZooKeeper zk, long session) {
        synchronized (watchLock) {
            if (isWatching(watch) || released.get() || ended.get() || session != sessionId) {
                return watch; // a lease of an ended session is not confirmed by the next one: LOST ends it
            }
            int armed = ++watch;
            zk.exists(ZKPaths.fixForNamespace(backend.client.getNamespace(), node), watcher, (rc, p, ctx, stat) -> {
                KeeperException.Code code = KeeperException.Code.get(rc);
                if (code == KeeperException.Code.OK || code == KeeperException.Code.NONODE) {
                    ours(stat, "was deleted on the server: " + ENDED);
                } else {
                    unwatched(armed);
                    log.debug("watching the node of lock '{}' ({}) failed ({}); the next probe tries again", lockName,
                            node, code);
                }
            }, null);
            return armed;
        }
    }

    static boolean isWatching(int watch) {
        return (watch & 1) == 1;
    }

    /** The watch set as state {@code armed} is no longer set (it fired, or its request failed). */
    private void unwatched(int armed) {
        synchronized (watchLock) {
            if (watch == armed) {
                watch++;
            }
        }
    }

    /**
     * The session's probe sent at {@code sentAt} was answered: the lease is confirmed if the watch it
     * counted, state {@code counted}, is still set (any event of it came ahead of the answer).
     */
    void confirmed(int counted, long sentAt, Duration ttl) {
        synchronized (watchLock) {
            if (watch != counted) {
                return;
            }
        }
        if (!released.get() && !ended.get()) {
            inCallback(() -> evidence.confirmed(sentAt, ttl));
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
        backend.forget(this);
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

    /** Curator reported {@code LOST}: the session is gone, and the servers delete its nodes with it. */
    void sessionLost() {
        if (!released.get()) {
            lost("the zookeeper session expired or was lost, and the server deletes the lock node with it", null);
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

    private void nodeEvent(WatchedEvent event) {
        if (released.get() || ended.get() || event.getType() == Watcher.Event.EventType.None) {
            return;
        }
        if (event.getType() == Watcher.Event.EventType.NodeDeleted) {
            lost("its lock node " + node + " was deleted on the server: " + ENDED, null);
            return;
        }
        // any other change consumed the watch: until it is set again, the probe confirms nothing of this lease
        synchronized (watchLock) {
            if (isWatching(watch)) {
                watch++;
            }
        }
        watchNode();
    }

    private void lost(String reason, Throwable cause) {
        ended.set(true);
        backend.forget(this);
        inCallback(() -> evidence.lost(reason, cause));
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
}
