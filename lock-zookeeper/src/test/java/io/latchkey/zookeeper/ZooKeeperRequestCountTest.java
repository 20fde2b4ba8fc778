package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedSemaphore;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.SemaphoreLease;
import io.latchkey.spi.LockClients;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The request floor, counted by the server, not timed: an uncontended lock and unlock is
 * three requests of the client's session (create, getChildren, delete), two of them writes; an
 * uncontended acquire and release of a semaphore's permit is four (create, getChildren, the
 * transaction that takes the slot, delete), three of them writes (five write operations, the
 * transaction holding three), once the client has read the semaphore's number of permits.
 *
 * <p>Two counters of the server itself: the {@code cons} four-letter word gives each connection's
 * last client request id ({@code lcxid}); a ZooKeeper client numbers its requests 1, 2, 3… and pings,
 * authentication and watch resets carry negative ids the server leaves out of {@code lcxid}, so its
 * growth is exactly the number of requests the session sent. The {@code mntr} word's per-namespace
 * counters count the writes and reads under the test's own top-level path (the {@code namespace}
 * option), which no other test touches.
 */
class ZooKeeperRequestCountTest {

    /**
     * A lease as long as the server keeps a session (its {@code maxSessionTimeout}: 10 s at the kit's
     * tick), so that a lease's first renewal, a quarter of the session after its grant, comes long after
     * each counted lease is closed.
     */
    private static final LockOptions BASE = LockOptions.builder().lease(Duration.ofSeconds(10)).build();
    private static final int CYCLES = 20;

    @RegisterExtension
    static final SharedServer<ZooKeeperServer> ZOOKEEPER = SharedServer.of(ZooKeeperBackendTest.SERVER_KEY,
            ZooKeeperServer::start);

    @Test
    @DisplayName("an uncontended lock and unlock is 3 requests of the session: create, getChildren, delete, 2 of"
            + " them writes")
    void threeRequestsPerLockAndUnlock() throws Exception {
        ZooKeeperServer server = ZOOKEEPER.get();
        String namespace = "count" + System.nanoTime();
        LockOptions options = BASE.toBuilder().namespace(namespace).build();
        ZooKeeperBackend backend = ZooKeeperTestSupport.backend(server, options);
        try (LockClient client = LockClients.of("zookeeper", backend, options);
                CuratorFramework raw = ZooKeeperTestSupport.rawClient(server.connectString())) {
            DistributedLock lock = client.lock("counted");
            // the lock name's node, with a schedule record in it, as a lock that has run a job has: so the
            // server's container manager does not delete it between cycles (a new one would cost a create)
            raw.create().creatingParentsIfNeeded().forPath(backend.lockPath(lock.name()) + "/" + SlotRecord.NODE);
            long session = backend.client.getZookeeperClient().getZooKeeper().getSessionId();
            long requestsBefore = ZooKeeperTestSupport.lastRequestId(server, session);
            long writesBefore = namespaceCount(server, namespace, "write");
            long readsBefore = namespaceCount(server, namespace, "read");

            for (int i = 0; i < CYCLES; i++) {
                try (Lease lease = lock.tryLock(Duration.ZERO).orElseThrow()) {
                    assertThat(lease.isValid()).isTrue();
                }
            }

            assertThat(backend.client.getZookeeperClient().getZooKeeper().getSessionId()).as("the session, unchanged")
                    .isEqualTo(session);
            assertThat(ZooKeeperTestSupport.lastRequestId(server, session) - requestsBefore)
                    .as("requests of the session for %d cycles", CYCLES)
                    .isEqualTo(3L * CYCLES);
            assertThat(namespaceCount(server, namespace, "write") - writesBefore).as("writes (create, delete)")
                    .isEqualTo(2L * CYCLES);
            assertThat(namespaceCount(server, namespace, "read") - readsBefore).as("reads (getChildren)")
                    .isEqualTo((long) CYCLES);
        }
    }

    @Test
    @DisplayName("an uncontended acquire and release of a permit is 4 requests of the session: create, getChildren,"
            + " the slot's transaction, delete, 3 of them writes; the number of permits is read once")
    void fourRequestsPerPermit() throws Exception {
        ZooKeeperServer server = ZOOKEEPER.get();
        String namespace = "semcount" + System.nanoTime();
        LockOptions options = BASE.toBuilder().namespace(namespace).build();
        ZooKeeperBackend backend = ZooKeeperTestSupport.backend(server, options);
        try (LockClient client = LockClients.of("zookeeper", backend, options);
                CuratorFramework raw = ZooKeeperTestSupport.rawClient(server.connectString())) {
            DistributedSemaphore semaphore = client.semaphore("counted", 2);
            // the semaphore's node as a semaphore in use has it: persistent here, so the server's container
            // manager does not delete it between cycles (a new one would cost a create)
            raw.create().creatingParentsIfNeeded().forPath(backend.semaphorePath(semaphore.name()),
                    "2".getBytes(StandardCharsets.UTF_8));
            long session = backend.client.getZookeeperClient().getZooKeeper().getSessionId();
            long firstBefore = ZooKeeperTestSupport.lastRequestId(server, session);
            semaphore.tryAcquire(Duration.ZERO).orElseThrow().close();
            assertThat(ZooKeeperTestSupport.lastRequestId(server, session) - firstBefore)
                    .as("requests of the first acquire and release, which reads the number of permits").isEqualTo(5L);
            long requestsBefore = ZooKeeperTestSupport.lastRequestId(server, session);
            long writesBefore = namespaceCount(server, namespace, "write");
            long readsBefore = namespaceCount(server, namespace, "read");

            for (int i = 0; i < CYCLES; i++) {
                try (SemaphoreLease lease = semaphore.tryAcquire(Duration.ZERO).orElseThrow()) {
                    assertThat(lease.isValid()).isTrue();
                    assertThat(lease.slot()).as("the lowest free slot").isZero();
                }
            }

            assertThat(backend.client.getZookeeperClient().getZooKeeper().getSessionId()).as("the session, unchanged")
                    .isEqualTo(session);
            assertThat(ZooKeeperTestSupport.lastRequestId(server, session) - requestsBefore)
                    .as("requests of the session for %d cycles", CYCLES)
                    .isEqualTo(4L * CYCLES);
            // the server counts each operation of a transaction: 3 write requests are 5 write operations
            assertThat(namespaceCount(server, namespace, "write") - writesBefore)
                    .as("write operations (create; the transaction's create, setData and delete; delete)")
                    .isEqualTo(5L * CYCLES);
            assertThat(namespaceCount(server, namespace, "read") - readsBefore).as("reads (getChildren)")
                    .isEqualTo((long) CYCLES);
        }
    }

    /**
     * A hand-over within milliseconds, counted on both sessions. The waiter's grant is dated from its own
     * create, younger than a quarter of the session timeout, so it sends no {@code sync} before the
     * children read that grants it; the holder, released before its session's first probe, never watches
     * its own node, and no lock read leaves a watch that a waiter's create would fire. Each cycle, a
     * holder of one client holds until a waiter of another client has queued (its node is listed), then
     * releases; the waiter is granted and releases at once. A session's probe ticks only while it holds a
     * lease, a quarter of the session timeout after the first: each cycle is checked to end well before.
     */
    @Test
    @DisplayName("a hand-over within milliseconds is 3 requests of the holder's session (create, getChildren, delete)"
            + " and 5 of the waiter's (create, getChildren, getData that watches the holder, getChildren, delete)")
    void requestsPerHandOver() throws Exception {
        ZooKeeperServer server = ZOOKEEPER.get();
        String namespace = "handover" + System.nanoTime();
        LockOptions options = BASE.toBuilder().namespace(namespace).build();
        ZooKeeperBackend holderBackend = ZooKeeperTestSupport.backend(server, options);
        ZooKeeperBackend waiterBackend = ZooKeeperTestSupport.backend(server, options);
        try (LockClient holders = LockClients.of("zookeeper", holderBackend, options);
                LockClient waiters = LockClients.of("zookeeper", waiterBackend, options);
                CuratorFramework raw = ZooKeeperTestSupport.rawClient(server.connectString())) {
            String lockPath = holderBackend.lockPath("handed"); // the namespace is its first part
            raw.create().creatingParentsIfNeeded().forPath(lockPath + "/" + SlotRecord.NODE);
            long tick = holderBackend.sessionTimeout().toNanos() / 4;
            long holderSession = holderBackend.client.getZookeeperClient().getZooKeeper().getSessionId();
            long waiterSession = waiterBackend.client.getZookeeperClient().getZooKeeper().getSessionId();
            long holderBefore = ZooKeeperTestSupport.lastRequestId(server, holderSession);
            long waiterBefore = ZooKeeperTestSupport.lastRequestId(server, waiterSession);

            for (int i = 0; i < CYCLES; i++) {
                long start = System.nanoTime();
                Lease held = holders.lock("handed").tryLock(Duration.ZERO).orElseThrow();
                CompletableFuture<Optional<Lease>> waiting = waiters.lock("handed").tryLockAsync(BASE.lease());
                await().atMost(BASE.timeout()).pollInterval(Duration.ofMillis(1)).until(() -> raw.getChildren()
                        .forPath(lockPath).stream().filter(n -> n.contains("lock-")).count() == 2);
                held.close();
                try (Lease granted = waiting.get(BASE.timeout().toMillis(), TimeUnit.MILLISECONDS).orElseThrow()) {
                    assertThat(granted.isValid()).isTrue();
                    assertThat(granted.fencingToken()).isGreaterThan(held.fencingToken());
                }
                assertThat(System.nanoTime() - start).as("cycle %d, in ns: these counts hold for cycles shorter than"
                        + " a probe's tick (%d ns)", i, tick).isLessThan(tick);
            }

            assertThat(List.of(holderBackend, waiterBackend)).as("the sessions, unchanged").map(b -> b.sessionId())
                    .containsExactly(holderSession, waiterSession);
            assertThat(ZooKeeperTestSupport.lastRequestId(server, holderSession) - holderBefore)
                    .as("requests of the holders' session for %d hand-overs", CYCLES).isEqualTo(3L * CYCLES);
            assertThat(ZooKeeperTestSupport.lastRequestId(server, waiterSession) - waiterBefore)
                    .as("requests of the waiters' session for %d hand-overs", CYCLES).isEqualTo(5L * CYCLES);
        }
    }

    /**
     * How many writes or reads the server counted under a top-level path, from {@code mntr}'s
     * {@code <namespace>_write_per_namespace} / {@code _read_per_namespace} summaries; 0 before the first.
     */
    private static long namespaceCount(ZooKeeperServer server, String namespace, String kind) throws Exception {
        String mntr = server.fourLetterWord("mntr");
        Matcher m = Pattern.compile("(?m)^zk_cnt_" + namespace + "_" + kind + "_per_namespace\\s+(\\d+)").matcher(mntr);
        if (!m.find()) {
            System.err.println("mntr without " + namespace + " " + kind + ":\n" + mntr);
            return 0;
        }
        return Long.parseLong(m.group(1));
    }
}
