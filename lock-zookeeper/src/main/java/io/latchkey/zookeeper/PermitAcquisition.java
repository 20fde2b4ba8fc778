package io.latchkey.zookeeper;

import io.latchkey.spi.Deadline;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.PermitLease;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition of a permit of a semaphore, run on the caller's thread: a queue of ephemeral
 * sequential waiter nodes in front of {@code permits} ephemeral slot nodes. Not thread-safe (one
 * caller); its watchers may fire on ZooKeeper's event thread.
 *
 * <p><b>The recipe.</b> The semaphore's node {@code <base>/@semaphores/<name>} is a container holding
 * the number of permits as its data, created once by the first waiter that finds it missing. A waiter
 * creates {@code <semaphore>/_c_<uuid>-wait-<seq>} (Curator's protected mode, as the lock's node), then
 * reads the semaphore's children, and its data when this client has not read them from this
 * incarnation of the node yet (the children read reports the node's {@code czxid}). Holders have no waiter node: with
 * {@code free} = permits minus the {@code slot-<k>} nodes present, the waiters at positions below
 * {@code free} are admitted, and each takes the lowest slot it sees free in one transaction that
 * creates the ephemeral {@code slot-<k>} (failing if it exists: the next free slot is tried), writes
 * the waiter's name and the holder text into it ({@link SemaphoreNodes#slotData}; the write's
 * {@code Stat} carries the slot's {@code czxid}, the fencing token, and its owner session, which a create
 * inside a transaction does not return) and deletes the waiter node. Since taking a slot removes the
 * taker from the queue, one departure wakes one waiter: the first waiter not admitted watches the
 * semaphore's children (a release of a slot or the departure of a waiter changes them), every later
 * waiter only its predecessor. Uncontended, an acquire and release is four requests: create,
 * getChildren, the transaction, delete (of the slot); the first acquire of a client on a semaphore node
 * adds a getData.
 *
 * <p><b>Evidence.</b> The transaction is a write the leader orders only for a live session, answered
 * with a slot owned by this client's current session: the validity deadline counts the session
 * timeout from its send time, as a lock's grant does from its create. The number of permits is read
 * after this waiter's create, at a server that has applied that create, so it is the data of the
 * semaphore node the waiter sits in, which cannot be deleted while the waiter, and then the slot, is
 * in it: a different number is refused with an {@link IllegalArgumentException}, never granted.
 *
 * <p><b>Expired sessions and bounds</b> are the lock's ({@link Acquisition}, {@link ZnodeRequests}): a
 * waiter whose session expired finds its node gone or owned by the old session, deletes what is left
 * and queues again within its wait; every answer is awaited at most until the deadline plus the {@code timeout} option;
 * a node the caller no longer waits for is deleted, including a slot taken by a transaction answered
 * only after the caller left (in its own session only, see {@link ZooKeeperPermit}).
 */
final class PermitAcquisition implements ZnodeRequests.Recipe<PermitLease> {

    private static final Logger log = LoggerFactory.getLogger(PermitAcquisition.class);

    private final ZooKeeperBackend backend;
    private final String name;
    private final int permits;
    private final String path;
    private final String subject;
    private final String where;
    private final LeaseEvidence evidence;
    /** The holder text of this request, written into the slot it takes, which {@link PermitInspection} reads. */
    private final String holder;
    private final ZnodeRequests requests;
    private final ZnodeRequests.ChildrenWatch childrenWatch;
    private final Runnable wakeUp;

    /** Whether the next read leaves a watch that wakes this waiter. */
    private boolean watchChildren;
    /** The children watch's fires before the last read. */
    private int firesBefore;
    /** The waiter just ahead, which this one watches after a look that did not admit it; null: the children. */
    private String ahead;

    PermitAcquisition(ZooKeeperBackend backend, String name, int permits, Deadline deadline, LeaseEvidence evidence) {
        this.backend = backend;
        this.name = name;
        this.permits = permits;
        this.path = backend.semaphorePath(name);
        this.subject = "semaphore '" + name + "'";
        this.where = backend.describeSemaphore(name);
        this.evidence = evidence;
        this.holder = backend.stamp.forCurrentThread();
        this.requests = new ZnodeRequests(backend, log, name, new ZnodeRequests.Words(subject, where, "waiter",
                "acquire a permit of", "no permit of " + subject + " (" + where + ") was acquired: ",
                "waiting for a permit"), deadline, this::checkOpen);
        this.childrenWatch = requests.childrenWatch;
        this.wakeUp = requests::wake;
    }

    /** The granted permit, or {@code null} if every permit stayed held until the deadline. */
    PermitLease run() throws InterruptedException {
        return requests.run(this);
    }

    @Override
    public boolean enqueue() throws KeeperException, InterruptedException {
        return createWaiter();
    }

    @Override
    public PermitLease look() throws KeeperException, InterruptedException {
        requests.resetWake();
        childrenWatch.waiter = watchChildren ? wakeUp : null;
        firesBefore = childrenWatch.fires.get();
        View view = read(watchChildren);
        String ours = ZKPaths.getNodeFromPath(requests.node);
        if (view == null || !view.children.contains(ours)) {
            requests.node = null; // gone with this client's expired session
            log.debug("{}: waiter {} is gone with its expired session; queueing again", subject, ours);
            return null;
        }
        if (view.permits != permits) {
            throw mismatch(view.permits);
        }
        if (requests.expired()) {
            return null;
        }
        List<String> waiters = SemaphoreNodes.waiters(view.children);
        Set<Integer> taken = SemaphoreNodes.slots(view.children);
        int at = waiters.indexOf(ours);
        taken.removeIf(k -> k >= permits); // not slots of this number of permits: never created here
        int free = Math.max(0, permits - taken.size());
        if (at < free) {
            for (int slot = 0; slot < permits && requests.node != null; slot++) {
                if (!taken.contains(slot)) {
                    PermitLease granted = take(slot);
                    if (granted != null) {
                        return granted;
                    }
                }
            }
            if (requests.node == null) {
                return null; // the waiter went with its session: queue again
            }
        }
        ahead = at <= free ? null : waiters.get(at - 1);
        return null;
    }

    @Override
    public void awaitChange() throws KeeperException, InterruptedException {
        if (ahead == null) {
            // the first waiter not admitted, or one admitted whose slots were all taken meanwhile: a
            // released slot or a departed waiter changes the children
            if (!watchChildren) {
                watchChildren = true; // read again, leaving a watch that wakes this waiter
                return;
            }
            if (childrenWatch.fires.get() == firesBefore) {
                requests.awaitWake();
            }
        } else {
            watchChildren = false;
            childrenWatch.waiter = null;
            requests.awaitDeparture(ZKPaths.makePath(path, ahead), "watch the queue of");
        }
    }

    private void checkOpen() {
        if (backend.isClosed()) {
            throw new IllegalStateException("zookeeper lock backend is closed; no permit of " + subject + " was acquired");
        }
    }

    private IllegalArgumentException mismatch(int stored) {
        return SemaphoreNodes.mismatch(subject, where, stored, permits);
    }

    /** Creates this acquisition's waiter node, and the semaphore's node first if it is missing; false to try again. */
    private boolean createWaiter() throws KeeperException, InterruptedException {
        for (int attempt = 0; attempt < 2; attempt++) {
            CuratorEvent created = requests.create(cb -> backend.client.create().withProtection()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).withACL(backend.acl).inBackground(cb)
                    .forPath(ZKPaths.makePath(path, SemaphoreNodes.WAITER_PREFIX), new byte[0]),
                    "queue for a permit of",
                    // the caller leaves: a waiter created after this moment would hold up the queue for nobody
                    late -> { });
            if (ZnodeRequests.code(created) == KeeperException.Code.NONODE && attempt == 0) {
                createSemaphoreNode();
                continue;
            }
            return requests.created(created, "confirm the waiter of") != null;
        }
        return false;
    }

    /**
     * The semaphore's container node with the number of permits as its data, created once: a node that
     * exists keeps its number (another client's may differ, which the read after the waiter's create
     * finds). The container manager deletes it once its last waiter and slot are gone.
     */
    private void createSemaphoreNode() throws KeeperException, InterruptedException {
        byte[] data = Integer.toString(permits).getBytes(StandardCharsets.UTF_8);
        for (int attempt = 1; ; attempt++) {
            CuratorEvent created = requests.await(ZnodeRequests.send(cb -> backend.client.create()
                    .creatingParentContainersIfNeeded().withMode(CreateMode.CONTAINER).withACL(backend.acl, true)
                    .inBackground(cb).forPath(path, data)), "create the node of");
            KeeperException.Code code = ZnodeRequests.code(created);
            if (code == KeeperException.Code.NONODE && attempt < Acquisition.PARENT_ATTEMPTS) {
                continue; // the parent container went meanwhile, as for a lock's node (Acquisition.create)
            }
            if (code != KeeperException.Code.NODEEXISTS) {
                ZnodeRequests.check(created);
            }
            return;
        }
    }

    /** The semaphore's number of permits and its children. */
    private record View(int permits, List<String> children) {
    }

    /**
     * The semaphore node's children and number of permits; {@code null} if the node is gone. The number
     * is read once per incarnation of the node (its {@code czxid}, which the children read reports): a
     * node's data is written only at its creation, so it is known for as long as that node lives.
     */
    private View read(boolean watch) throws KeeperException, InterruptedException {
        CuratorEvent c = requests.await(ZnodeRequests.send(cb -> (watch
                ? backend.client.getChildren().usingWatcher(childrenWatch) : backend.client.getChildren())
                .inBackground(cb).forPath(path)), "read the queue of");
        if (ZnodeRequests.code(c) == KeeperException.Code.NONODE) {
            return null;
        }
        ZnodeRequests.check(c);
        Integer known = c.getStat() == null ? null : backend.knownPermits(path, c.getStat().getCzxid());
        if (known != null) {
            return new View(known, c.getChildren());
        }
        CuratorEvent d = requests.await(ZnodeRequests.send(cb -> backend.client.getData().inBackground(cb)
                .forPath(path)), "read the permits of");
        if (ZnodeRequests.code(d) == KeeperException.Code.NONODE) {
            return null;
        }
        ZnodeRequests.check(d);
        int n = SemaphoreNodes.permits(d.getData(), name, subject, path);
        backend.rememberPermits(path, d.getStat().getCzxid(), n);
        return new View(n, c.getChildren());
    }

    /**
     * Takes slot {@code slot} in one transaction: create it, write this waiter's name and the holder text
     * into it (whose {@code Stat} tells the slot's czxid and owner), delete the waiter. Null if the slot is taken or
     * the waiter is gone ({@link ZnodeRequests#node} then null).
     */
    private PermitLease take(int slot) throws KeeperException, InterruptedException {
        String slotPath = ZKPaths.makePath(path, SemaphoreNodes.SLOT_PREFIX + slot);
        String waiter = ZKPaths.getNodeFromPath(requests.node);
        byte[] data = SemaphoreNodes.slotData(waiter, holder);
        List<CuratorOp> ops;
        try {
            ops = List.of(
                    backend.client.transactionOp().create().withMode(CreateMode.EPHEMERAL).withACL(backend.acl)
                            .forPath(slotPath, new byte[0]),
                    backend.client.transactionOp().setData().forPath(slotPath, data),
                    backend.client.transactionOp().delete().forPath(requests.node));
        } catch (Exception e) {
            throw backend.failure(name, subject, where, "take a permit of", e);
        }
        long sentAt = System.nanoTime();
        CompletableFuture<CuratorEvent> sent = ZnodeRequests.send(cb -> backend.client.transaction().inBackground(cb)
                .forOperations(ops));
        CuratorEvent answer;
        try {
            answer = requests.await(sent, "take a permit of");
        } catch (InterruptedException | RuntimeException e) {
            // the caller leaves: a slot taken after this moment would be held for nobody
            sent.thenAccept(late -> {
                Stat stat = ZnodeRequests.ok(late) && late.getOpResults() != null && late.getOpResults().size() == 3
                        ? late.getOpResults().get(1).getResultStat() : null;
                if (stat != null) {
                    log.info("{}: slot {} was taken after the caller stopped waiting; releasing it", subject, slot);
                    ZooKeeperPermit.deleteSlot(backend, slotPath, stat.getCzxid(), stat.getEphemeralOwner(), subject);
                }
            });
            throw e;
        }
        List<CuratorTransactionResult> results = answer.getOpResults();
        if (ZnodeRequests.ok(answer) && results != null && results.size() == 3) {
            requests.node = null; // deleted by the transaction
            return grant(slot, slotPath, results.get(1).getResultStat(), sentAt);
        }
        int createError = SemaphoreNodes.error(results, 0);
        int deleteError = SemaphoreNodes.error(results, 2);
        if (createError == KeeperException.Code.NODEEXISTS.intValue()) {
            Stat earlier = slotOf(slotPath, waiter);
            if (earlier != null) {
                // Curator sent the transaction again after a lost answer: the first one took the slot
                requests.node = null;
                return grant(slot, slotPath, earlier, sentAt);
            }
            return null;
        }
        if (deleteError == KeeperException.Code.NONODE.intValue()) {
            requests.node = null;
            log.debug("{}: waiter {} is gone with its expired session; queueing again", subject, waiter);
            return null;
        }
        ZnodeRequests.check(answer);
        throw KeeperException.create(KeeperException.Code.get(SemaphoreNodes.firstError(results)), slotPath);
    }

    /** The Stat of a slot node waiter {@code waiter} took in an earlier answer lost with the connection, or null. */
    private Stat slotOf(String slotPath, String waiter) throws KeeperException, InterruptedException {
        CuratorEvent read = requests.await(ZnodeRequests.send(cb -> backend.client.getData().inBackground(cb)
                .forPath(slotPath)), "read a slot of");
        if (ZnodeRequests.code(read) == KeeperException.Code.NONODE) {
            return null;
        }
        ZnodeRequests.check(read);
        return waiter.equals(SemaphoreNodes.slotWaiter(read.getData())) ? read.getStat() : null;
    }

    private PermitLease grant(int slot, String slotPath, Stat stat, long sentAt) {
        childrenWatch.waiter = null;
        if (stat == null || stat.getEphemeralOwner() != backend.sessionId()) {
            // taken in a session that has ended since: the server deletes the slot with it; queue again
            log.debug("{}: slot {} was taken in a session that has ended; queueing again", subject, slot);
            return null;
        }
        ZooKeeperPermit lease = new ZooKeeperPermit(backend, name, slotPath, slot, stat.getCzxid(),
                stat.getEphemeralOwner(), evidence);
        return requests.hold(lease, sentAt);
    }
}
