package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.spi.LockClients;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A client holding many locks renews them all with one probe of its session: the requests its session
 * sends while holding 200 locks are about those it sends while holding one, counted by the server
 * (the {@code cons} word's {@code lcxid}, as in {@link ZooKeeperRequestCountTest}), in windows of the
 * probe's tick, a quarter of the session timeout the lease asked for.
 */
class ZooKeeperManyLocksTest {

    /** A short lease, so that a window of several ticks takes a few seconds. */
    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(3))
            .timeout(Duration.ofSeconds(2)).build();
    private static final int LOCKS = 200;
    private static final int TICKS = 8;

    @RegisterExtension
    static final SharedServer<ZooKeeperServer> ZOOKEEPER = SharedServer.of(ZooKeeperBackendTest.SERVER_KEY,
            ZooKeeperServer::start);

    @Test
    @DisplayName("a client holding 200 locks sends about as many requests a second as one holding a single lock, and"
            + " every lease stays valid")
    void requestsDoNotGrowWithTheLocksHeld() throws Exception {
        ZooKeeperServer server = ZOOKEEPER.get();
        String namespace = "many" + System.nanoTime();
        ZooKeeperBackend backend = connect(server, namespace);
        try (LockClient client = LockClients.of("zookeeper", backend, OPTIONS.toBuilder().namespace(namespace).build())) {
            List<Lease> held = new ArrayList<>();
            try {
                Duration tick = backend.sessionTimeout().dividedBy(4);
                long session = backend.client.getZookeeperClient().getZooKeeper().getSessionId();

                held.add(client.lock("many-0").tryLock(Duration.ZERO).orElseThrow());
                double one = requestsPerSecond(server, session, tick);
                for (int i = 1; i < LOCKS; i++) {
                    held.add(client.lock("many-" + i).tryLock(Duration.ZERO).orElseThrow());
                }
                double many = requestsPerSecond(server, session, tick);

                assertThat(held).as("leases confirmed by the probe alone, long after their grant").allMatch(Lease::isValid);
                System.err.printf("requests a second of the session: %.1f with one lock held, %.1f with %d (tick %s)%n",
                        one, many, LOCKS, tick);
                double perTick = 1e9 / tick.toNanos();
                // a probe is two requests; a tick's phase may put one probe more into a window
                assertThat(many).as("requests a second with %d locks held, against %.1f with one (tick %s)", LOCKS, one, tick)
                        .isLessThan(2 * one + 2 * perTick);
                // a window of TICKS ticks holds TICKS + 1 probes at most; one more for a slow clock read
                assertThat(one).as("requests a second with one lock held (tick %s)", tick).isLessThan(
                        2 * perTick * (TICKS + 2) / TICKS);
            } finally {
                held.forEach(Lease::close);
            }
        }
    }

    @Test
    @DisplayName("a lease among many whose node changes stays valid, and once its node is deleted it is lost at once"
            + " while the others stay valid")
    void aDeletedNodeIsLostAmongMany() throws Exception {
        ZooKeeperServer server = ZOOKEEPER.get();
        String namespace = "manylost" + System.nanoTime();
        ZooKeeperBackend backend = connect(server, namespace);
        try (LockClient client = LockClients.of("zookeeper", backend, OPTIONS.toBuilder().namespace(namespace).build());
                CuratorFramework raw = ZooKeeperTestSupport.rawClient(server.connectString())) {
            List<Lease> held = new ArrayList<>();
            try {
                Duration tick = backend.sessionTimeout().dividedBy(4);
                for (int i = 0; i < 3; i++) {
                    held.add(client.lock("lost-" + i).tryLock(Duration.ZERO).orElseThrow());
                }
                Thread.sleep(tick.multipliedBy(2).toMillis()); // the probe has set each lease's own watch
                String lockPath = "/" + namespace + LockPaths.DEFAULT_BASE + "/" + LockPaths.nodeName("lost-1");
                String node = lockPath + "/" + raw.getChildren().forPath(lockPath).stream()
                        .filter(n -> n.contains("lock-")).findFirst().orElseThrow();

                raw.setData().forPath(node, "changed".getBytes(StandardCharsets.UTF_8)); // fires the watch once
                Thread.sleep(tick.multipliedBy(TICKS).toMillis()); // past the validity of the last evidence before it
                assertThat(held).as("leases after a change of one node, its watch set again").allMatch(Lease::isValid);

                raw.delete().forPath(node);
                Exception why = held.get(1).lost().toCompletableFuture().get(tick.toMillis(), TimeUnit.MILLISECONDS);
                assertThat(why).hasMessageContaining("lost-1").hasMessageContaining(node);
                assertThat(held.get(1).isValid()).isFalse();
                Thread.sleep(tick.multipliedBy(2).toMillis());
                assertThat(List.of(held.get(0), held.get(2))).as("the other leases").allMatch(Lease::isValid);
            } finally {
                held.forEach(Lease::close);
            }
        }
    }

    private static ZooKeeperBackend connect(ZooKeeperServer server, String namespace) {
        return ZooKeeperTestSupport.backend(server, OPTIONS.toBuilder().namespace(namespace).build());
    }

    /**
     * The requests {@code session} sent a second over {@link #TICKS} ticks, after two ticks in which the
     * probe sets the own watch of every lease granted before them.
     */
    private static double requestsPerSecond(ZooKeeperServer server, long session, Duration tick) throws Exception {
        Thread.sleep(tick.multipliedBy(2).toMillis());
        long before = ZooKeeperTestSupport.lastRequestId(server, session);
        long from = System.nanoTime();
        Thread.sleep(tick.multipliedBy(TICKS).toMillis());
        long requests = ZooKeeperTestSupport.lastRequestId(server, session) - before;
        return requests * 1e9 / (System.nanoTime() - from);
    }

}
