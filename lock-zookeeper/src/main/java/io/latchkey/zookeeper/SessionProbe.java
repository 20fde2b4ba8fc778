package io.latchkey.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The evidence of every lease a backend holds, from one probe of its session: two requests a tick
 * however many locks the client holds, where a probe per lease sent two per lock. Thread-safe.
 *
 * <p>Every quarter of the session timeout, while the backend holds a lease, the probe takes
 * {@link System#nanoTime()} and sends {@code sync} and then {@code exists} on the base path, both on
 * the session's own ZooKeeper handle. A {@code sync} is answered only after the leader has seen it, and
 * the {@code exists} answer after that (a session's requests are answered in order), so the answer
 * proves the session alive at the servers after the send time; the servers then keep the session, and
 * every ephemeral node of it, at least the negotiated session timeout from there unless they hear from
 * the client again. The answer confirms each lease that watched its own node with {@code exists}
 * before the {@code sync} was sent, and whose watch has not fired since.
 *
 * <p>Why that is a lease's own evidence: an ephemeral node lives exactly as long as its session, or
 * until someone deletes it (a force release). ZooKeeper delivers a watch event to the client before
 * any answer to a request the server handled after the change, and a watch set by a request sent ahead
 * of the {@code sync} is in place on the server before the {@code sync} (the client sends a handle's
 * requests in order and the server handles them in order). So a node deleted before the probe's read
 * has fired its lease's watch before the probe is answered: the lease has seen {@code NodeDeleted} and
 * reported its loss first, and the shared layer ignores confirmations after a loss. A node that was
 * already gone when its watch was set is told by that request's own answer, again ahead of the probe's.
 * A lease whose watch fired for another change (its schedule record written) sets it again and is
 * confirmed from the next tick on; one not watching yet (every lease granted since the last tick) has
 * its watch set by the tick itself, ahead of the {@code sync}. Requests go on the raw handle, not
 * through Curator, because Curator sends a request again after a lost connection, after requests sent
 * later; the raw handle fails every request in flight with the connection instead, and the watches
 * it has set are set again, ahead of anything else, when it reconnects in the same session (a node
 * deleted meanwhile fires then).
 *
 * <p>{@code SUSPENDED} stops the evidence (the probe is not answered), so the validity deadline counts
 * down from the last answer; {@code RECONNECTED} probes at once.
 */
final class SessionProbe {

    private static final Logger log = LoggerFactory.getLogger(SessionProbe.class);

    private final ZooKeeperBackend backend;
    private final Set<ZooKeeperLease> leases = ConcurrentHashMap.newKeySet();
    private final AtomicLong inFlight = new AtomicLong(); // the send time of the probe under way, 0 if none
    private ScheduledFuture<?> ticker; // guarded by this; runs while a lease is held

    SessionProbe(ZooKeeperBackend backend) {
        this.backend = backend;
    }

    /**
     * Adds a held lease, starting the ticks if it is the only one.
     *
     * @throws RejectedExecutionException if the backend is closed
     */
    synchronized void add(ZooKeeperLease lease) {
        if (ticker == null) {
            long every = Math.max(50, backend.sessionTimeout().toMillis() / 4);
            ticker = backend.renewer.scheduleWithFixedDelay(this::tick, every, every, TimeUnit.MILLISECONDS);
        }
        leases.add(lease);
    }

    /** Removes a lease that was released or lost, stopping the ticks if it was the last one. */
    synchronized void remove(ZooKeeperLease lease) {
        if (leases.remove(lease) && leases.isEmpty() && ticker != null) {
            ticker.cancel(false);
            ticker = null;
        }
    }

    Set<ZooKeeperLease> leases() {
        return leases;
    }

    /** The connection came back in the same session: what was in flight died with the old one, probe at once. */
    void reconnected() {
        inFlight.set(0);
        try {
            backend.renewer.execute(this::tick);
        } catch (RejectedExecutionException e) {
            // closed: nothing to confirm any more
        }
    }

    private void tick() {
        if (leases.isEmpty()) {
            return;
        }
        ZooKeeper zk;
        try {
            zk = backend.client.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            log.debug("no zookeeper handle to probe the session of {} leases under {}", leases.size(),
                    backend.basePath, e);
            return;
        }
        if (!zk.getState().isConnected()) {
            return; // nothing would answer; RECONNECTED probes at once
        }
        long sentAt = System.nanoTime();
        long previous = inFlight.get();
        if (previous != 0 && sentAt - previous < 2 * backend.timeout.toNanos()) {
            return; // the last probe is still under way
        }
        if (!inFlight.compareAndSet(previous, sentAt)) {
            return;
        }
        long session = zk.getSessionId();
        // each watch taken here was set by a request sent before this sync, or is set now, ahead of it
        List<Watching> watching = new ArrayList<>(leases.size());
        for (ZooKeeperLease lease : leases) {
            int watch = lease.watchFor(zk, session);
            if (ZooKeeperLease.isWatching(watch)) {
                watching.add(new Watching(lease, watch));
            }
        }
        String path = ZKPaths.fixForNamespace(backend.client.getNamespace(), backend.basePath);
        AtomicBoolean synced = new AtomicBoolean();
        zk.sync(path, (rc, p, ctx) -> synced.set(answered(rc)), null);
        zk.exists(path, false, (rc, p, ctx, stat) -> {
            inFlight.compareAndSet(sentAt, 0);
            if (!synced.get() || !answered(rc)) {
                log.debug("probe of the session under {} failed ({}); the validity deadlines of its {} leases keep"
                        + " counting down", backend.basePath, KeeperException.Code.get(rc), watching.size());
                return;
            }
            Duration ttl = Duration.ofMillis(zk.getSessionTimeout());
            for (Watching w : watching) {
                w.lease.confirmed(w.watch, sentAt, ttl);
            }
        }, null);
    }

    /** A base path not created (yet) answers too: it is the session's answer that counts, not the node. */
    private static boolean answered(int rc) {
        KeeperException.Code code = KeeperException.Code.get(rc);
        return code == KeeperException.Code.OK || code == KeeperException.Code.NONODE;
    }

    private record Watching(ZooKeeperLease lease, int watch) {
    }
}
