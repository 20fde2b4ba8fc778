package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.fault.TcpProxy;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The round trips of an uncontended lock, shown through a proxy that holds every answer of the server
 * for {@link #DELAY}: each round trip then takes at least that long, and one can be told from two by
 * the time a call takes. The acquire sends its create and its read of the queue together (the read
 * goes out right behind the create, and ZooKeeper answers a session's requests in order), so it takes
 * one round trip where Curator's {@code InterProcessMutex} takes two; the release is one (the delete).
 * The requests themselves are still three ({@link ZooKeeperRequestCountTest}).
 */
class ZooKeeperRoundTripTest {

    /** How long the proxy holds each answer: far above what the client itself spends on a loaded machine. */
    private static final Duration DELAY = Duration.ofMillis(500);
    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(6))
            .timeout(Duration.ofSeconds(5)).build();
    private static final int CYCLES = 3;

    @RegisterExtension
    static final SharedServer<ZooKeeperServer> ZOOKEEPER = SharedServer.of(ZooKeeperBackendTest.SERVER_KEY,
            ZooKeeperServer::start);

    @Test
    @DisplayName("an uncontended acquire takes one round trip (create and read answered together), a release one")
    void oneRoundTripToAcquire() throws Exception {
        ZooKeeperServer server = ZOOKEEPER.get();
        String name = "round-trips-" + System.nanoTime();
        try (TcpProxy proxy = TcpProxy.start(server.endpoints().get(0));
                LockClient client = LockClient.connect(URI.create(server.uri(List.of(proxy.endpoint()))), OPTIONS);
                CuratorFramework raw = ZooKeeperTestSupport.rawClient(server.connectString())) {
            DistributedLock lock = client.lock(name);
            // the lock's node exists, with a schedule record in it, as for a lock in use: no parent to create
            raw.create().creatingParentsIfNeeded().forPath(LockPaths.DEFAULT_BASE + "/" + LockPaths.nodeName(name)
                    + "/" + SlotRecord.NODE);
            lock.tryLock(Duration.ZERO).orElseThrow().close();
            proxy.delayAnswers(DELAY);
            for (int i = 0; i < CYCLES; i++) {
                long start = System.nanoTime();
                Lease lease = lock.tryLock(Duration.ZERO).orElseThrow();
                Duration acquire = Duration.ofNanos(System.nanoTime() - start);
                start = System.nanoTime();
                lease.close();
                Duration release = Duration.ofNanos(System.nanoTime() - start);
                assertThat(acquire).as("acquire %d: at least one round trip, less than two", i)
                        .isGreaterThanOrEqualTo(DELAY).isLessThan(DELAY.multipliedBy(2));
                assertThat(release).as("release %d: one round trip", i)
                        .isGreaterThanOrEqualTo(DELAY).isLessThan(DELAY.multipliedBy(2));
            }
        }
    }
}
