package io.latchkey.zookeeper;

import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.LeaseEvidence;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition of a lock, or of a read-write lock's read or write mode, run on the caller's thread:
 * the lock recipe on ephemeral sequential nodes. Not thread-safe (one caller); its watchers may fire on
 * ZooKeeper's event thread.
 *
 * <p><b>The recipe.</b> Create an ephemeral sequential node {@code <lock path>/_c_<uuid>-lock-<seq>}
 * (Curator's protected mode: after a lost connection Curator finds the node by its uuid rather than
 * create a second one), then read the lock path's children. The lowest {@code lock-} node holds the
 * lock; every other waiter watches only its predecessor (with {@code getData}, which leaves no watch
 * on a node that is already gone), so a release wakes one waiter. Node names are those of Curator's
 * {@code InterProcessMutex}, so plain Curator mutexes on the same path exclude Latchkey's and the other
 * way round. Uncontended, a lock and unlock is three requests: create, getChildren, delete; and two
 * round trips, since the getChildren goes out right behind the create without waiting for its answer
 * ({@link #readBehind()}), where Curator's mutex waits for it.
 *
 * <p><b>The holder.</b> The node's data is the {@link io.latchkey.Holder} text of the acquiring
 * thread ({@link io.latchkey.spi.HolderStamp}), written by the create itself, so it costs no request;
 * {@link LockInspection} reads it back. The recipe itself never uses a lock node's data (a waiter's
 * getData on its predecessor is for the watch only). A read-write lock's nodes carry it too.
 *
 * <p><b>Evidence for rule 7 without a {@code sync}.</b> The create is a write: the leader checks the
 * session when it orders the create, and the answer carries the node's {@link Stat}. So a create
 * answered with a node owned by this client's current session proves that the session was alive at
 * the leader after the create was sent: the validity deadline starts from that send time, and the
 * fencing token is the node's {@code czxid} from the same Stat. The getChildren that follows is a read
 * a follower answers, possibly behind the leader; it cannot hide a lower node, since every lower node
 * was created before ours and the follower has applied our create before it answers our read; staleness
 * can only show a node already deleted, which makes this waiter wait, never grants wrongly. A waiter
 * granted after waiting dates its grant from its create too, while the create is younger than a quarter
 * of the session timeout (one interval of the session's probe, {@link SessionProbe}): the servers keep
 * a session at least its timeout after they last heard from it, so the node cannot go with an expired
 * session before the deadline dated from the create, whatever the read after the wait shows; and the
 * grant starts with no less validity than a held lease has just before the probe answers. A waiter whose
 * create is older sends a {@code sync} in the same round trip just before its getChildren and dates
 * its grant from that, since a follower's read, possibly stale, proves nothing about the session: the
 * waiters of a contended lock, granted within milliseconds, send no {@code sync}.
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
 * Curator's guaranteed delete, including one whose create is answered only after the caller left. That
 * plumbing, the same for a permit's acquisition, is {@link ZnodeRequests}'.
 *
 * <p><b>Read-write locks</b> use the same recipe under {@code <base>/@rw/<name>}, with the node names of
 * Curator's {@code InterProcessReadWriteLock}: {@code _c_<uuid>-__READ__<seq>} and
 * {@code _c_<uuid>-__WRIT__<seq>}, ordered by the sequence after the marker, so that Curator's read-write
 * lock on that path and ours exclude each other. A writer holds when its node is the lowest, and watches
 * the node just below it; a reader holds when no write node is below its own, and watches the nearest
 * write node below it, so that readers never wake each other and a reader that arrives after a waiting
 * writer queues behind it. The token is the node's {@code czxid} as for a lock: global and growing, so a
 * write's token is above every node created before it, read or write, and a read's above every write
 * granted before it was asked for (that write's node was created earlier), whatever cleanup did to the
 * per-parent sequence in between.
 */
final class Acquisition implements ZnodeRequests.Recipe<BackendLease> {

    private static final Logger log = LoggerFactory.getLogger(Acquisition.class);
    /** The node name's part before the sequence number, as Curator's {@code InterProcessMutex} names it. */
    static final String LOCK_NODE_PREFIX = "lock-";
    /** How often a create whose parent container was deleted meanwhile is tried; see {@link #create()}. */
    static final int PARENT_ATTEMPTS = 3;
    /** The markers of Curator's {@code InterProcessReadWriteLock} nodes. */
    static final String READ_MARKER = "__READ__";
    static final String WRITE_MARKER = "__WRIT__";

    /** What is acquired: a lock, or a mode of a read-write lock; the node name's marker and the words of messages. */
    enum Mode {
        LOCK(LOCK_NODE_PREFIX, "lock"), READ(READ_MARKER, "read lock"), WRITE(WRITE_MARKER, "write lock");

        final String marker;
        final String noun;

        Mode(String marker, String noun) {
            this.marker = marker;
            this.noun = noun;
        }
    }

    private final ZooKeeperBackend backend;
    private final String lockName;
    private final Mode mode;
    private final String lockPath;
    private final LeaseEvidence evidence;
    private final byte[] data;
    private final ZnodeRequests requests;

    /** This acquisition's node's czxid, while it has one (the node and its owner are {@link #requests}'). */
    private long czxid;
    private long evidenceAt; // when the request that proves the node's session alive was sent
    private boolean waited;
    private String predecessor; // the node this waiter watches, after a look that did not grant
    /** The children read sent right behind the last create, in the same round trip; null once looked at. */
    private CompletableFuture<CuratorEvent> readBehind;

    Acquisition(ZooKeeperBackend backend, String lockName, Mode mode, Deadline deadline, LeaseEvidence evidence) {
        this.backend = backend;
        this.lockName = lockName;
        this.mode = mode;
        this.lockPath = mode == Mode.LOCK ? backend.lockPath(lockName) : backend.readWritePath(lockName);
        this.evidence = evidence;
        // made here, on the thread that acquires, and sent with the create: the identity costs no request
        this.data = backend.stamp.forCurrentThread().getBytes(StandardCharsets.UTF_8);
        String where = mode == Mode.LOCK ? backend.describe(lockName) : backend.describeReadWrite(lockName);
        String subject = mode.noun + " '" + lockName + "'";
        this.requests = new ZnodeRequests(backend, log, lockName, new ZnodeRequests.Words(subject,
                where, "node", "acquire", subject + " (" + where + ") was not acquired: ",
                "waiting for the " + mode.noun), deadline, () -> backend.checkOpen(lockName));
    }

    /** The granted lease, or {@code null} if the lock stayed held until the deadline. */
    BackendLease run() throws InterruptedException {
        return requests.run(this);
    }

    @Override
    public boolean enqueue() throws KeeperException, InterruptedException {
        evidenceAt = System.nanoTime();
        if (!create()) {
            return false;
        }
        waited = false;
        return true;
    }

    @Override
    public BackendLease look() throws KeeperException, InterruptedException {
        long checkAt = System.nanoTime();
        String ours = ZKPaths.getNodeFromPath(requests.node);
        long provenAt = evidenceAt;
        List<String> children = waited ? null : readBehind(ours);
        if (children == null) {
            if (waited && createTooOld(checkAt)) {
                provenAt = checkAt;
                children = syncedChildren();
            } else {
                children = children();
            }
            backend.childrenReads.increment();
        }
        if (!children.contains(ours)) {
            requests.node = null; // gone with this client's expired session
            log.debug("{} '{}': this client's node {} is gone with its expired session; queueing again",
                    mode.noun, lockName, ours);
            return null;
        }
        if (requests.expired()) {
            return null;
        }
        predecessor = mode == Mode.LOCK ? predecessor(children, ours) : blocker(children, ours, mode == Mode.WRITE);
        if (predecessor == null) {
            return grant(provenAt);
        }
        waited = true;
        return null;
    }

    @Override
    public void awaitChange() throws KeeperException, InterruptedException {
        requests.resetWake();
        requests.awaitDeparture(ZKPaths.makePath(lockPath, predecessor), "watch the holder of");
    }

    /**
     * Creates this acquisition's node; false if it must be created again.
     *
     * <p>The parents are containers, which the server deletes once empty: a read-write lock's node sits
     * in {@code <base>/@rw}, which goes when the last read-write lock does. Curator creates missing
     * parents one after another, and gives up with {@code NoNode} when the server deletes one of them
     * before it created the next (seen: a read lock refused at once). A container created anew is not
     * deleted before its first child, so the create is tried again, {@link #PARENT_ATTEMPTS} times at most.
     */
    private boolean create() throws KeeperException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            CuratorEvent created = requests.create(cb -> {
                backend.client.create().creatingParentContainersIfNeeded().withProtection()
                        .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).withACL(backend.acl, true).inBackground(cb)
                        .forPath(ZKPaths.makePath(lockPath, mode.marker), data);
                readBehind();
            }, "create a node for",
                    // the caller leaves: a node created after this moment would hold the lock for nobody
                    late -> log.info("{} '{}': node {} was created after the caller stopped waiting; deleting it",
                            mode.noun, lockName, late));
            if (ZnodeRequests.code(created) == KeeperException.Code.NONODE && attempt < PARENT_ATTEMPTS) {
                log.debug("{} '{}': a parent container of {} was deleted while it was created; creating it again",
                        mode.noun, lockName, lockPath);
                continue;
            }
            return confirm(created);
        }
    }

    private boolean confirm(CuratorEvent created) throws KeeperException, InterruptedException {
        Stat stat = requests.created(created, "confirm the node of");
        if (stat == null) {
            return false;
        }
        czxid = stat.getCzxid();
        return true;
    }

    private BackendLease grant(long evidenceAt) {
        ZooKeeperLease lease = mode == Mode.LOCK
                ? new ZooKeeperLease(backend, lockName, requests.node, czxid, requests.owner, evidence)
                : new ZooKeeperModeLease(backend, lockName, mode.noun, requests.node, czxid, requests.owner, evidence);
        requests.node = null; // the lease owns it now
        return requests.hold(lease, evidenceAt);
    }

    /**
     * Sends the queue's read right behind the create, without waiting for the create's answer: ZooKeeper
     * answers a session's requests in order and serves its read only after its own write, so the read
     * usually lists the new node, and the acquisition learns in one round trip whether it holds.
     */
    private void readBehind() {
        readBehind = ZnodeRequests.send(cb -> backend.client.getChildren().inBackground(cb).forPath(lockPath));
    }

    /**
     * The children the read sent behind the create found, if they list {@code ours}; else {@code null}, and
     * the caller reads again. Listing our node proves the read was served after the create, on a snapshot
     * at least as new: every lower node still there was created before ours and is listed, so the read
     * tells whether ours is the lowest exactly as a read sent after the create's answer would. A read that
     * does not list it (served first, if the create was delayed, or refused because a parent container was
     * created only by the create's retry) proves nothing, and is not used.
     */
    private List<String> readBehind(String ours) throws KeeperException, InterruptedException {
        CompletableFuture<CuratorEvent> sent = readBehind;
        readBehind = null;
        if (sent == null) {
            return null;
        }
        backend.childrenReads.increment();
        CuratorEvent read = requests.await(sent, "read the queue of");
        if (!ZnodeRequests.ok(read) || !read.getChildren().contains(ours)) {
            return null;
        }
        return read.getChildren();
    }

    private List<String> children() throws KeeperException, InterruptedException {
        CuratorEvent read = requests.await(ZnodeRequests.send(cb -> backend.client.getChildren().inBackground(cb)
                .forPath(lockPath)), "read the queue of");
        ZnodeRequests.check(read);
        return read.getChildren();
    }

    /**
     * Whether the create's evidence is too old to date a grant from at {@code now}: older than a quarter
     * of the session timeout, one interval of the session's probe. A grant dated from younger evidence
     * starts with at least the validity a held lease has just before the probe answers; an older one
     * needs a {@code sync} of its own.
     */
    private boolean createTooOld(long now) {
        return now - evidenceAt > backend.sessionTimeout().toNanos() / 4;
    }

    /** A {@code sync} and then the children, in one round trip ({@link ZnodeRequests#syncedChildren}). */
    private List<String> syncedChildren() throws KeeperException, InterruptedException {
        CuratorEvent read = requests.syncedChildren(lockPath, "read the queue of");
        if (read == null) {
            throw KeeperException.create(KeeperException.Code.NONODE, lockPath);
        }
        return read.getChildren();
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

    /**
     * The node a read-write waiter waits for, or {@code null} if {@code ours} holds: for a writer the node
     * just below it, read or write; for a reader the nearest write node below it. Nodes are ordered by the
     * sequence after their marker, as Curator orders them.
     */
    static String blocker(List<String> children, String ours, boolean write) {
        List<String> nodes = new ArrayList<>();
        for (String child : children) {
            if (modeSequence(child) != null) {
                nodes.add(child);
            }
        }
        nodes.sort(Comparator.comparing(Acquisition::modeSequence));
        for (int at = nodes.indexOf(ours) - 1; at >= 0; at--) {
            if (write || isWrite(nodes.get(at))) {
                return nodes.get(at);
            }
        }
        return null;
    }

    /** Whether a read-write lock's node is a write node ({@code _c_<uuid>-__WRIT__0000000007}). */
    static boolean isWrite(String child) {
        return child.contains(WRITE_MARKER);
    }

    /** The sequence after a read or write marker ({@code _c_<uuid>-__READ__0000000007}), or null if it has none. */
    static String modeSequence(String child) {
        int at = Math.max(child.lastIndexOf(READ_MARKER), child.lastIndexOf(WRITE_MARKER));
        return at < 0 ? null : child.substring(at + READ_MARKER.length());
    }
}
