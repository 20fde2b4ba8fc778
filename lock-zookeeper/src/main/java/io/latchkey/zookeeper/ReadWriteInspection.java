package io.latchkey.zookeeper;

import io.latchkey.GrantTime;
import io.latchkey.LockException;
import io.latchkey.spi.GrantRecord;
import io.latchkey.spi.ReadWriteRecords;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One read of who holds a read-write lock, for {@link ZooKeeperBackend#inspectReadWrite}, run on the
 * caller's thread: reads only, so it creates nothing (no node of a name nobody used), takes nothing, wakes
 * nobody and leaves no watch. Not thread-safe (one caller).
 *
 * <p>As {@link LockInspection}: a {@code sync} and the children of {@code <base>/@rw/<name>} in one round
 * trip (no node: free), then a {@code getData} of the nodes that may hold, each answer within
 * {@code timeout} in all. Who holds is {@link Acquisition#blocker}'s rule, the one its acquire grants by:
 * in the order of the sequence after the marker, a write node holds if it is the lowest, a read node if no
 * write node is below it. So the read nodes below the lowest write node hold, or that write node alone
 * if it is the lowest; a waiting writer and every node behind it hold nothing and are not read.
 *
 * <p>A node released between the reads is gone for good (sequence names are never used again), and a
 * node created since has a higher sequence than every node listed, so it blocks no listed node. The
 * candidates are read in order, in one round trip, up to and including the lowest listed write node; a
 * node whose read finds it gone is passed over. A read node found is held at its read, since every write
 * node below it was gone at that node's earlier read; a write node found is held if no read node below it
 * was found. Only when that write node was gone too are the listed nodes behind it read the same way; only
 * when every listed node was gone are the children read again, {@link LockInspection#PASSES} times at most.
 *
 * <p>Per held node: its data, the {@link io.latchkey.Holder} text the create that queued it wrote (data
 * that is none, as a Curator read-write lock's address, is a holder the grant does not name), its
 * {@code czxid}, the token of its lease, and its {@code ctime}, when the server queued it
 * ({@link GrantTime.Source#BACKEND_AT_REQUEST}); no {@code expiresIn}, as for a lock.
 */
final class ReadWriteInspection {

    private static final Logger log = LoggerFactory.getLogger(ReadWriteInspection.class);

    private final ZooKeeperBackend backend;
    private final String name;
    private final String path;
    private final ZnodeRequests requests;

    ReadWriteInspection(ZooKeeperBackend backend, String name) {
        this.backend = backend;
        this.name = name;
        this.path = backend.readWritePath(name);
        String where = backend.describeReadWrite(name);
        String subject = "read-write lock '" + name + "'";
        this.requests = ZnodeRequests.forReads(backend, log, name, new ZnodeRequests.Words(subject, where, "node",
                "inspect", subject + " (" + where + ") was not inspected: ", "reading the read-write lock's holders"),
                this::checkOpen);
    }

    private void checkOpen() {
        if (backend.isClosed()) {
            throw new IllegalStateException("zookeeper lock backend is closed; read-write lock '" + name
                    + "' was not inspected");
        }
    }

    /** The held grants: the readers oldest first, or the writer; {@link ReadWriteRecords#FREE} if none. */
    ReadWriteRecords run() throws InterruptedException {
        checkOpen();
        try {
            for (int pass = 1; ; pass++) {
                List<String> nodes = modeNodes();
                if (nodes.isEmpty()) {
                    return ReadWriteRecords.FREE;
                }
                ReadWriteRecords held = holders(nodes);
                if (held != null) {
                    return held;
                }
                if (pass == LockInspection.PASSES) {
                    throw new LockException(name, "could not inspect read-write lock '" + name + "' ("
                            + backend.describeReadWrite(name) + "): in " + LockInspection.PASSES + " reads of its"
                            + " queue in a row, every node listed was released before its data could be read; the"
                            + " lock changes hands faster than a round trip: inspect again");
                }
                log.debug("read-write lock '{}': every node of the queue read was released before its data was read;"
                        + " reading again", name);
            }
        } catch (KeeperException e) {
            throw requests.failure(e);
        }
    }

    /**
     * The grants held among {@code nodes} (sorted), read in batches that each end at a write node; null if
     * every node was gone when read. A node found holds by {@link Acquisition#blocker} among the nodes found
     * so far: those below it that were still there, and are still there or gone for good.
     */
    private ReadWriteRecords holders(List<String> nodes) throws KeeperException, InterruptedException {
        List<String> found = new ArrayList<>();
        List<GrantRecord> readers = new ArrayList<>();
        int from = 0;
        while (from < nodes.size()) {
            int to = from;
            while (to < nodes.size() - 1 && !Acquisition.isWrite(nodes.get(to))) {
                to++;
            }
            // sent together: a session's reads are answered in order, so each is read after the ones below it
            List<CompletableFuture<CuratorEvent>> reads = new ArrayList<>();
            for (String node : nodes.subList(from, to + 1)) {
                String nodePath = ZKPaths.makePath(path, node);
                reads.add(ZnodeRequests.send(cb -> backend.client.getData().inBackground(cb).forPath(nodePath)));
            }
            for (int i = from; i <= to; i++) {
                CuratorEvent read = requests.await(reads.get(i - from), "read a holder of");
                if (ZnodeRequests.code(read) == KeeperException.Code.NONODE) {
                    continue; // released since the children were read: it blocks nobody now
                }
                ZnodeRequests.check(read);
                String node = nodes.get(i);
                boolean write = Acquisition.isWrite(node);
                found.add(node);
                if (Acquisition.blocker(found, node, write) != null) {
                    // it waits, and so does every node behind it: a write node is below them all
                    return new ReadWriteRecords(readers, null);
                }
                if (write) {
                    return new ReadWriteRecords(List.of(), record(read)); // the lowest: nobody behind it holds
                }
                readers.add(record(read));
            }
            from = to + 1;
        }
        return found.isEmpty() ? null : new ReadWriteRecords(readers, null);
    }

    /** A held node's grant, as read: its holder text, its {@code czxid} as the token, its {@code ctime}. */
    private static GrantRecord record(CuratorEvent read) {
        byte[] data = read.getData();
        Stat stat = read.getStat();
        return new GrantRecord(data == null ? null : new String(data, StandardCharsets.UTF_8), stat.getCzxid(), null,
                -1, new GrantTime(Instant.ofEpochMilli(stat.getCtime()), GrantTime.Source.BACKEND_AT_REQUEST));
    }

    /** The read and write nodes under the path, lowest sequence first; none if the path does not exist. */
    private List<String> modeNodes() throws KeeperException, InterruptedException {
        CuratorEvent read = requests.syncedChildren(path, "read the queue of");
        return read == null ? List.of() : ZnodeRequests.bySequence(read, Acquisition::modeSequence);
    }
}
