package io.latchkey.zookeeper;

import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.PermitLease;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One held permit of a ZooKeeper semaphore: its ephemeral {@code slot-<k>} node, with exactly the
 * evidence, renewal, loss watches and release of a lock's node ({@link ZooKeeperLease}). Thread-safe.
 *
 * <p>The fencing token is the slot node's {@code czxid}: each grant of slot {@code k} creates the node
 * anew, and ZooKeeper's transaction ids only grow, across restarts, session expiry and the deletion of
 * the semaphore's container node. Schedule slots are not recorded for permits.
 *
 * <p><b>Release.</b> Unlike a lock node's name, a slot's path is taken again by the next holder, so
 * Curator's guaranteed delete, which retries in whatever session the client has by then, could delete
 * the next holder's node. A permit deletes its slot only through the ZooKeeper handle of the session
 * that owns it: if that session has ended, the server has deleted the node with it (or is about to),
 * and nothing is sent. After a lost connection the delete is tried again in the same session only
 * once {@code exists} shows the node with this permit's {@code czxid}.
 */
final class ZooKeeperPermit extends ZooKeeperLease implements PermitLease {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperPermit.class);
    private static final long RETRY_PAUSE_MS = 100;

    private final ZooKeeperBackend backend;
    private final int slot;
    private final String node;
    private final long czxid;
    private final long sessionId;

    ZooKeeperPermit(ZooKeeperBackend backend, String name, String node, int slot, long czxid, long sessionId,
            LeaseEvidence evidence) {
        super(backend, name, node, czxid, sessionId, evidence);
        this.backend = backend;
        this.slot = slot;
        this.node = node;
        this.czxid = czxid;
        this.sessionId = sessionId;
    }

    @Override
    CompletableFuture<Void> deleteNode() {
        return deleteSlot(backend, node, czxid, sessionId, subject());
    }

    /**
     * Deletes the slot node {@code path} created with {@code czxid} in session {@code sessionId}, only in
     * that session; completes once it is gone or its session has ended.
     */
    static CompletableFuture<Void> deleteSlot(ZooKeeperBackend backend, String path, long czxid, long sessionId,
            String subject) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        String actual = ZKPaths.fixForNamespace(backend.client.getNamespace(), path);
        long giveUpAt = System.nanoTime() + 2 * backend.timeout.toNanos() + TimeUnit.MILLISECONDS.toNanos(RETRY_PAUSE_MS);
        attempt(backend, actual, czxid, sessionId, subject, false, giveUpAt, done);
        return done;
    }

    private static void attempt(ZooKeeperBackend backend, String path, long czxid, long sessionId, String subject,
            boolean checkFirst, long giveUpAt, CompletableFuture<Void> done) {
        ZooKeeper zk;
        try {
            zk = backend.client.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            done.completeExceptionally(e);
            return;
        }
        if (zk.getSessionId() != sessionId) {
            done.complete(null); // the session that owned the slot has ended: the server deletes its node
            return;
        }
        if (checkFirst) {
            zk.exists(path, false, (rc, p, ctx, stat) -> {
                KeeperException.Code code = KeeperException.Code.get(rc);
                if (code == KeeperException.Code.OK && stat.getCzxid() == czxid) {
                    attempt(backend, path, czxid, sessionId, subject, false, giveUpAt, done);
                } else if (code == KeeperException.Code.OK || code == KeeperException.Code.NONODE
                        || code == KeeperException.Code.SESSIONEXPIRED) {
                    done.complete(null); // gone, and the node there now is someone else's
                } else {
                    retryLater(backend, path, czxid, sessionId, subject, giveUpAt, done, code);
                }
            }, null);
            return;
        }
        zk.delete(path, -1, (rc, p, ctx) -> {
            KeeperException.Code code = KeeperException.Code.get(rc);
            if (code == KeeperException.Code.OK || code == KeeperException.Code.NONODE
                    || code == KeeperException.Code.SESSIONEXPIRED) {
                done.complete(null);
            } else {
                retryLater(backend, path, czxid, sessionId, subject, giveUpAt, done, code);
            }
        }, null);
    }

    private static void retryLater(ZooKeeperBackend backend, String path, long czxid, long sessionId, String subject,
            long giveUpAt, CompletableFuture<Void> done, KeeperException.Code code) {
        if (code != KeeperException.Code.CONNECTIONLOSS || System.nanoTime() - giveUpAt > 0) {
            log.debug("{}: deleting slot {} failed ({}); it goes with the session", subject, path, code);
            done.completeExceptionally(KeeperException.create(code, path));
            return;
        }
        try {
            backend.renewer.schedule(() -> attempt(backend, path, czxid, sessionId, subject, true, giveUpAt, done),
                    RETRY_PAUSE_MS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            done.completeExceptionally(KeeperException.create(code, path)); // the backend closes, and the session with it
        }
    }

    @Override
    public int slot() {
        return slot;
    }

    @Override
    String subject() {
        return "permit " + slot + " of semaphore '" + lockName() + "'";
    }

    @Override
    String where() {
        return backend.describeSemaphore(lockName());
    }

    @Override
    public boolean recordsSlots() {
        return false;
    }

    @Override
    public Optional<Instant> lastCompletedSlot() {
        throw new UnsupportedOperationException("zookeeper permits do not record schedule slots");
    }

    @Override
    public void recordCompletedSlot(Instant slot) {
        throw new UnsupportedOperationException("zookeeper permits do not record schedule slots");
    }
}
