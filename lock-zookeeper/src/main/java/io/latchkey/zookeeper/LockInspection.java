package io.latchkey.zookeeper;

import io.latchkey.GrantTime;
import io.latchkey.Holder;
import io.latchkey.LockException;
import io.latchkey.spi.GrantRecord;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One read of who holds a lock, for {@link ZooKeeperBackend#inspect}, run on the caller's thread:
 * reads only, so it creates nothing (no parent of a name nobody holds) and leaves no watch. Not
 * thread-safe (one caller).
 *
 * <p>A {@code sync} and the lock path's children in one round trip (ZooKeeper answers a session's
 * requests in order), so that a follower behind the leader does not show a holder that released before
 * the read began; no lock path is a free lock. The holder is the lowest {@code lock-} node, by
 * {@link Acquisition}'s rule; then a {@code getData} of it reads its data, the {@link Holder} text its
 * acquisition wrote, its {@code czxid}, the fencing token that grant's lease has, and its {@code ctime},
 * when the server created it by the server's clock: the moment of the grant for an acquisition that did not
 * wait, earlier for one whose node queued ({@link GrantTime.Source#BACKEND_AT_REQUEST}).
 *
 * <p>The waiters are the other {@code lock-} nodes of that children read, those listed after the
 * holder's: no further request. A node is there from its create until it is deleted, so the count
 * includes the node of a waiter whose session died (its process killed or cut off) until the server
 * expires that session, and the node of a waiter that gave up until its delete (Curator's guaranteed
 * delete, retried after a lost connection) reaches the server: ZooKeeper does not tell whether another
 * session is alive, so no node is filtered. A node created after the children read is not counted; one
 * listed after the holder's and deleted before the holder's {@code getData} still is.
 *
 * <p>A node released between the two reads is gone for good (sequence names are never used again),
 * and a node created since has a higher sequence than every node listed: so the first listed node that
 * still exists, read in order, is the lowest at the moment of its read, and holds the lock. Only when
 * every listed node is gone are the children read again, {@value #PASSES} times at most.
 */
final class LockInspection {

    private static final Logger log = LoggerFactory.getLogger(LockInspection.class);
    /** How often the children are read when every node listed left before its data was read. */
    static final int PASSES = 3;

    private final ZooKeeperBackend backend;
    private final String lockName;
    private final String lockPath;
    private final String doing;
    private final String done;
    private final ZnodeRequests requests;

    LockInspection(ZooKeeperBackend backend, String lockName) {
        this(backend, lockName, "inspect", "inspected");
    }

    /**
     * A read for another purpose ({@link ZooKeeperAdmin#forceRelease}), whose messages say what was not
     * done: {@code doing} ("inspect", "force-release") and {@code done} ("inspected", "force-released").
     */
    LockInspection(ZooKeeperBackend backend, String lockName, String doing, String done) {
        this.backend = backend;
        this.lockName = lockName;
        this.lockPath = backend.lockPath(lockName);
        this.doing = doing;
        this.done = done;
        String where = backend.describe(lockName);
        String subject = "lock '" + lockName + "'";
        this.requests = ZnodeRequests.forReads(backend, log, lockName, new ZnodeRequests.Words(subject, where, "node",
                doing, subject + " (" + where + ") was not " + done + ": ", "reading the lock's holder"),
                this::checkOpen);
    }

    private void checkOpen() {
        if (backend.isClosed()) {
            throw new IllegalStateException("zookeeper lock backend is closed; lock '" + lockName + "' was not " + done);
        }
    }

    /** The grant as read: its node's path and {@link Stat}, and the record {@link #run} hands back. */
    record Grant(String node, Stat stat, GrantRecord record) {
    }

    /** The current grant, or empty if no lock node is there. */
    Optional<GrantRecord> run() throws InterruptedException {
        return read().map(Grant::record);
    }

    /** The current grant with its node, or empty if no lock node is there. */
    Optional<Grant> read() throws InterruptedException {
        checkOpen();
        try {
            for (int pass = 1; ; pass++) {
                List<String> nodes = lockNodes();
                if (nodes.isEmpty()) {
                    return Optional.empty();
                }
                for (int i = 0; i < nodes.size(); i++) {
                    String path = ZKPaths.makePath(lockPath, nodes.get(i));
                    CuratorEvent read = requests.await(ZnodeRequests.send(cb -> backend.client.getData().inBackground(cb)
                            .forPath(path)), "read the holder of");
                    if (ZnodeRequests.code(read) == KeeperException.Code.NONODE) {
                        continue; // released since the children were read: the next one may hold now
                    }
                    ZnodeRequests.check(read);
                    // data that is no holder text (an older Latchkey's lock name, a Curator mutex's address) reads as unknown
                    byte[] data = read.getData();
                    // the waiters: the lock- nodes listed after the holder's, as the children read showed them
                    int waiters = nodes.size() - i - 1;
                    Stat stat = read.getStat();
                    return Optional.of(new Grant(path, stat, new GrantRecord(data == null ? null
                            : new String(data, StandardCharsets.UTF_8), stat.getCzxid(), null, waiters,
                            new GrantTime(Instant.ofEpochMilli(stat.getCtime()), GrantTime.Source.BACKEND_AT_REQUEST))));
                }
                if (pass == PASSES) {
                    throw new LockException(lockName, "could not " + doing + " lock '" + lockName + "' ("
                            + backend.describe(lockName) + "): in " + PASSES + " reads of its queue in a row, every node"
                            + " listed was released before its data could be read; the lock changes hands faster than a"
                            + " round trip: " + doing + " again");
                }
                log.debug("lock '{}': every node of the queue read was released before its data was read; reading again",
                        lockName);
            }
        } catch (KeeperException e) {
            throw requests.failure(e);
        }
    }

    /** The lock nodes under the lock path, lowest sequence first; none if the path does not exist. */
    private List<String> lockNodes() throws KeeperException, InterruptedException {
        CuratorEvent read = requests.syncedChildren(lockPath, "read the queue of");
        return read == null ? List.of() : ZnodeRequests.bySequence(read, Acquisition::sequence);
    }

}
