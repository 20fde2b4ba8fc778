package io.latchkey.zookeeper;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.spi.GrantRecord;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An operator's tools on the ZooKeeper backend: {@link ZooKeeperBackend#forceRelease} and
 * {@link ZooKeeperBackend#list}, run on the caller's thread. Both only read, apart from the one delete
 * of a force release: neither creates a node (no base path, no lock path of a name nobody holds) nor
 * leaves a watch. Stateless; thread-safe.
 *
 * <p><b>Force release.</b> The grant is read as {@link LockInspection} reads it (the lowest {@code lock-}
 * node: its data the holder text, its {@code czxid} the token), and exactly that node is deleted, with the
 * version just read, so that a node that changed since is not clobbered; the grant handed back is that
 * read's, its waiters (the {@code lock-} nodes listed behind the one deleted) included. The delete goes
 * through the session's ZooKeeper handle, not Curator: Curator sends a background request again after a
 * lost connection, and the {@code NoNode} of that second try would read as a grant that ended by itself, so
 * that the next holder's grant would be ended too. A node gone (released, its session expired) or changed
 * before the delete is read again, {@value #ATTEMPTS} times at most. The holder learns the deletion at
 * once from the watch on its own node or on the lock path's children ({@link ZooKeeperLease}), and at the
 * latest from its next probe, a quarter of the session timeout later. The waiter just behind watches that
 * node: it wakes, is the lowest now and is granted, with a higher token, since its node was created later.
 *
 * <p><b>List.</b> The base path's children are the lock names' nodes: a {@code sync} and the children
 * in one round trip, as {@link LockInspection} reads a queue. Node names no lock name maps to are passed
 * over ({@link LockPaths#lockName}): the subtrees of semaphores and read-write locks, other clients'
 * nodes, and the long form of names whose encoding is longer than {@value LockPaths#MAX_PLAIN}
 * characters, which keeps only a hash of the name's end and so cannot be named (logged). The names under
 * the prefix and after {@code after} are then read in order, a batch of children reads per round trip,
 * until {@code limit} of them hold a {@code lock-} node: a lock path left with none (its container not
 * yet deleted, a recorded schedule slot) is a free name.
 */
final class ZooKeeperAdmin {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperAdmin.class);
    /** How often a force release reads the grant again when the node it read left or changed before its delete. */
    static final int ATTEMPTS = 3;
    /** The most children reads of lock paths sent in one round trip by a list. */
    static final int BATCH = 128;

    private final ZooKeeperBackend backend;

    ZooKeeperAdmin(ZooKeeperBackend backend) {
        this.backend = backend;
    }

    /** Ends the current grant of {@code lockName}: the grant ended, or empty if no lock node was there. */
    Optional<GrantRecord> forceRelease(String lockName) throws InterruptedException {
        String where = backend.describe(lockName);
        String subject = "lock '" + lockName + "'";
        for (int attempt = 1; ; attempt++) {
            Optional<LockInspection.Grant> read = new LockInspection(backend, lockName, "force-release",
                    "force-released").read();
            if (read.isEmpty()) {
                return Optional.empty();
            }
            LockInspection.Grant grant = read.get();
            ZnodeRequests requests = ZnodeRequests.forReads(backend, log, lockName, new ZnodeRequests.Words(subject,
                    where, "node", "force-release", subject + " (" + where + ") was not force-released: ",
                    "force-releasing the lock"), () -> backend.checkOpen(lockName));
            KeeperException.Code code;
            try {
                code = requests.await(delete(grant.node(), grant.stat().getVersion()), "delete the holder's node of");
            } catch (KeeperException e) {
                throw requests.failure(e);
            }
            if (code == KeeperException.Code.OK) {
                // the shared layer warns of it with the holder; the node is this backend's own detail
                log.debug("lock '{}' ({}): force-released the grant of node {} (token {})",
                        lockName, where, grant.node(), grant.record().token());
                return Optional.of(grant.record());
            }
            if (code != KeeperException.Code.NONODE && code != KeeperException.Code.BADVERSION) {
                KeeperException failed = KeeperException.create(code, grant.node());
                if (ZooKeeperBackend.unreachable(failed)) {
                    // sent once, and unanswered: the server may have applied it
                    throw new LockBackendUnavailableException(lockName, "could not confirm the force release of "
                            + subject + " (" + where + "): the connection to zookeeper failed before the delete of node "
                            + grant.node() + " was answered (" + code + "), so the grant may or may not have ended;"
                            + " inspect the lock once zookeeper is reachable, and force-release it again if it is held",
                            failed);
                }
                throw requests.failure(failed);
            }
            if (attempt == ATTEMPTS) {
                throw new LockException(lockName, "could not force-release " + subject + " (" + where + "): in "
                        + ATTEMPTS + " attempts in a row, the holder's node read (last " + grant.node() + ") was released"
                        + " or changed before it could be deleted; the lock changes hands faster than a round trip:"
                        + " force-release again");
            }
            log.debug("lock '{}': node {} was {} before the force release deleted it; reading the grant again", lockName,
                    grant.node(), code == KeeperException.Code.NONODE ? "released" : "changed");
        }
    }

    /**
     * Deletes {@code node} if it still has {@code version}, through the session's ZooKeeper handle, which
     * sends it once (see the class comment); completes with the answer's code.
     */
    private CompletableFuture<KeeperException.Code> delete(String node, int version) {
        CompletableFuture<KeeperException.Code> answer = new CompletableFuture<>();
        try {
            String path = ZKPaths.fixForNamespace(backend.client.getNamespace(), node);
            backend.client.getZookeeperClient().getZooKeeper().delete(path, version,
                    (rc, p, ctx) -> answer.complete(KeeperException.Code.get(rc)), null);
        } catch (Exception e) {
            answer.completeExceptionally(e);
        }
        return answer;
    }

    /** The first {@code limit} held lock names starting with {@code prefix} and after {@code after}, in order. */
    List<String> list(String prefix, String after, int limit) throws InterruptedException {
        String subject = "the held locks under prefix '" + prefix + "'";
        String where = "zookeeper path '" + backend.basePath + "'";
        ZnodeRequests.Words words = new ZnodeRequests.Words(subject, where, "node", "list", subject + " (" + where
                + ") were not listed: ", "listing the held locks");
        Runnable checkOpen = () -> {
            if (backend.isClosed()) {
                throw new IllegalStateException("zookeeper lock backend is closed; " + subject + " were not listed");
            }
        };
        checkOpen.run();
        ZnodeRequests requests = ZnodeRequests.forReads(backend, log, prefix, words, checkOpen);
        try {
            List<String> candidates = new ArrayList<>();
            int unnamed = 0;
            for (String child : syncedChildren(requests, backend.basePath)) {
                String name = LockPaths.lockName(child);
                if (name == null) {
                    unnamed += LockPaths.isHashed(child) ? 1 : 0;
                } else if (name.startsWith(prefix) && (after == null || name.compareTo(after) > 0)) {
                    candidates.add(name);
                }
            }
            if (unnamed > 0) {
                log.debug("{} ({}): {} node(s) of names longer than a node name keeps are not listed: only a hash of"
                        + " those names is stored", subject, where, unnamed);
            }
            candidates.sort(Comparator.naturalOrder());
            List<String> held = new ArrayList<>();
            for (int from = 0; from < candidates.size() && held.size() < limit; ) {
                // each round trip its own bound: a long list is many answers, each within the timeout option
                ZnodeRequests batch = ZnodeRequests.forReads(backend, log, prefix, words, checkOpen);
                int to = Math.min(candidates.size(), from + Math.min(BATCH, Math.max(limit - held.size(), 8)));
                List<CompletableFuture<CuratorEvent>> reads = new ArrayList<>();
                for (String name : candidates.subList(from, to)) {
                    String path = backend.lockPath(name);
                    reads.add(ZnodeRequests.send(cb -> backend.client.getChildren().inBackground(cb).forPath(path)));
                }
                for (int i = 0; i < reads.size() && held.size() < limit; i++) {
                    if (holdsLockNode(batch.await(reads.get(i), "read the queue of a lock of"))) {
                        held.add(candidates.get(from + i));
                    }
                }
                from = to;
            }
            return held;
        } catch (KeeperException e) {
            throw requests.failure(e);
        }
    }

    /** The children of {@code path}, after a {@code sync} in the same round trip; none if it does not exist. */
    private List<String> syncedChildren(ZnodeRequests requests, String path) throws KeeperException, InterruptedException {
        CompletableFuture<CuratorEvent> sync = ZnodeRequests.send(cb -> backend.client.sync().inBackground(cb).forPath(path));
        CompletableFuture<CuratorEvent> read = ZnodeRequests.send(cb -> backend.client.getChildren().inBackground(cb)
                .forPath(path));
        CuratorEvent s = requests.await(sync, "read");
        if (!ZnodeRequests.ok(s) && ZnodeRequests.code(s) != KeeperException.Code.NONODE) {
            throw KeeperException.create(ZnodeRequests.code(s), path);
        }
        CuratorEvent r = requests.await(read, "read");
        return ZnodeRequests.code(r) == KeeperException.Code.NONODE ? List.of() : checked(r).getChildren();
    }

    /** Whether a lock path's children read shows a {@code lock-} node: no lock path is a free name. */
    private static boolean holdsLockNode(CuratorEvent read) throws KeeperException {
        if (ZnodeRequests.code(read) == KeeperException.Code.NONODE) {
            return false;
        }
        for (String child : checked(read).getChildren()) {
            if (Acquisition.sequence(child) != null) {
                return true;
            }
        }
        return false;
    }

    private static CuratorEvent checked(CuratorEvent event) throws KeeperException {
        ZnodeRequests.check(event);
        return event;
    }
}
