package io.latchkey.zookeeper;

import io.latchkey.GrantTime;
import io.latchkey.spi.GrantRecord;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One read of who holds each permit of a semaphore, for {@link ZooKeeperBackend#inspectPermits}, run on
 * the caller's thread: reads only, so it creates nothing (no node of a semaphore nobody used), takes no
 * slot, wakes no waiter and leaves no watch. Not thread-safe (one caller).
 *
 * <p>Two round trips, as {@link LockInspection}'s: a {@code sync} and the semaphore node's children (no
 * node: every slot is free); then a {@code getData} of each listed {@code slot-<k>} below {@code permits}
 * and, last, of the semaphore's node. A slot's data carries the {@link io.latchkey.Holder} text its grant
 * wrote ({@link SemaphoreNodes#slotHolder}), its {@code czxid} is the permit's fencing token, and its
 * {@code ctime} the grant, by the server's clock: the slot node is created by the transaction that grants
 * ({@link GrantTime.Source#BACKEND_AT_GRANT}). A slot gone before its read was released meanwhile: free.
 *
 * <p>The semaphore node's data, its number of permits, is read after the slots: with the same
 * {@code czxid} as the node the children were read from, that node lived through every read, so the slots
 * read were its own, and a different number of permits is refused as an acquire refuses it. With another
 * {@code czxid}, or none, the node was deleted meanwhile, which the container manager does only once no
 * slot is left in it: every slot was free at that moment, and so they are reported.
 */
final class PermitInspection {

    private static final Logger log = LoggerFactory.getLogger(PermitInspection.class);

    private final ZooKeeperBackend backend;
    private final String name;
    private final int permits;
    private final String path;
    private final String subject;
    private final String where;
    private final ZnodeRequests requests;

    PermitInspection(ZooKeeperBackend backend, String name, int permits) {
        this.backend = backend;
        this.name = name;
        this.permits = permits;
        this.path = backend.semaphorePath(name);
        this.subject = "semaphore '" + name + "'";
        this.where = backend.describeSemaphore(name);
        this.requests = ZnodeRequests.forReads(backend, log, name, new ZnodeRequests.Words(subject, where, "slot",
                "inspect", subject + " (" + where + ") was not inspected: ", "reading the semaphore's slots"),
                this::checkOpen);
    }

    private void checkOpen() {
        if (backend.isClosed()) {
            throw new IllegalStateException("zookeeper lock backend is closed; semaphore '" + name
                    + "' was not inspected");
        }
    }

    /** The held slots' records by slot; empty if none is held or the semaphore has no node. */
    Map<Integer, GrantRecord> run() throws InterruptedException {
        checkOpen();
        try {
            CuratorEvent children = requests.syncedChildren(path, "read the slots of");
            if (children == null) {
                return Map.of(); // a semaphore nobody uses now: no node, and none is created
            }
            return readSlots(children.getChildren(), children.getStat());
        } catch (KeeperException e) {
            throw requests.failure(e);
        }
    }

    /** Reads each listed slot below {@code permits}, then the number of permits of the node {@code listed} tells. */
    private Map<Integer, GrantRecord> readSlots(List<String> children, Stat listed)
            throws KeeperException, InterruptedException {
        Map<Integer, CompletableFuture<CuratorEvent>> reads = new TreeMap<>();
        for (int slot : SemaphoreNodes.slots(children)) {
            if (slot < permits) {
                String slotPath = ZKPaths.makePath(path, SemaphoreNodes.SLOT_PREFIX + slot);
                reads.put(slot, ZnodeRequests.send(cb -> backend.client.getData().inBackground(cb).forPath(slotPath)));
            }
        }
        // sent last: the same node then, with the same czxid, means it lived through the slots' reads
        CompletableFuture<CuratorEvent> count = ZnodeRequests.send(cb -> backend.client.getData().inBackground(cb)
                .forPath(path));
        Map<Integer, GrantRecord> held = new HashMap<>();
        for (Map.Entry<Integer, CompletableFuture<CuratorEvent>> read : reads.entrySet()) {
            CuratorEvent slot = requests.await(read.getValue(), "read a slot of");
            if (ZnodeRequests.code(slot) == KeeperException.Code.NONODE) {
                continue; // released since the children were read
            }
            ZnodeRequests.check(slot);
            Stat stat = slot.getStat();
            held.put(read.getKey(), new GrantRecord(SemaphoreNodes.slotHolder(slot.getData()), stat.getCzxid(), null,
                    -1, new GrantTime(Instant.ofEpochMilli(stat.getCtime()), GrantTime.Source.BACKEND_AT_GRANT)));
        }
        CuratorEvent data = requests.await(count, "read the permits of");
        if (ZnodeRequests.code(data) == KeeperException.Code.NONODE
                || (ZnodeRequests.ok(data) && listed != null && data.getStat().getCzxid() != listed.getCzxid())) {
            log.debug("{}: its node was deleted while its slots were read, once no slot was held", subject);
            return Map.of();
        }
        ZnodeRequests.check(data);
        int stored = SemaphoreNodes.permits(data.getData(), name, subject, path);
        if (stored != permits) {
            throw SemaphoreNodes.mismatch(subject, where, stored, permits);
        }
        return Map.copyOf(held);
    }
}
