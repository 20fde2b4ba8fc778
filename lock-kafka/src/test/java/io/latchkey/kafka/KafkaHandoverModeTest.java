package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.kafka.KafkaServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the {@code handover} option trades, shown with a waiter killed (SIGKILL, in a child JVM) while
 * another waits: a dead member holds up every rebalance until its session ends, and a holder that
 * rejoined one sends no heartbeats meanwhile.
 */
class KafkaHandoverModeTest {

    @RegisterExtension
    static final SharedServer<KafkaServer> KAFKA = SharedServer.of(KafkaLockTest.SERVER_KEY, KafkaServer::start);

    @ParameterizedTest(name = "handover={0}")
    @ValueSource(strings = {"rejoin", "heartbeat"})
    @DisplayName("a waiter killed while another waits: with handover=rejoin the holder's lease runs out, with heartbeat it stays valid")
    void killedWaiter(String mode) throws Exception {
        String bootstrap = KAFKA.get().bootstrapServers();
        String uri = "kafka://" + bootstrap + "?lease=6s&handover=" + mode;
        String name = "handover-mode:" + mode + ":" + Long.toHexString(ThreadLocalRandom.current().nextLong());
        String group = TopicNames.topic(KafkaLockProvider.DEFAULT_PREFIX, name);
        Duration lease = Duration.ofSeconds(6);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        Process child = null;
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap));
                LockClient holderClient = LockClient.connect(uri);
                LockClient waiterClient = LockClient.connect(uri)) {
            Lease held = holderClient.lock(name).tryLock(lease).orElseThrow();
            // Patient: the scenario before the release (the child JVM's start and join, half a lease, the kill, two
            // leases) is not what this wait bounds; the grant after the release is bounded below.
            Future<Optional<Lease>> waiter = pool.submit(() -> waiterClient.lock(name).tryLock(lease.multipliedBy(30)));
            child = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), HandoverWaiterChild.class.getName(), uri, name))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            Awaitility.await("the holder and two waiters in the group").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> admin.describeConsumerGroups(List.of(group)).all().get().get(group).members().size() == 3);
            // a few heartbeat intervals in the group, so that the child's member has joined a generation
            Thread.sleep(lease.dividedBy(2).toMillis());
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);

            // the child's session (lease minus a heartbeat) ends, and its expulsion's rebalance completes
            long until = System.nanoTime() + lease.multipliedBy(2).toNanos();
            boolean stayedValid = true;
            while (System.nanoTime() - until < 0 && stayedValid) {
                stayedValid = held.isValid();
                Thread.sleep(20);
            }

            if (mode.equals("heartbeat")) {
                assertThat(stayedValid).as("the holder's lease two leases after a waiter was killed").isTrue();
            } else {
                assertThat(stayedValid).as("the holder's lease, with the dead waiter holding up the parked rebalance")
                        .isFalse();
            }
            held.close();
            assertThat(waiter.get(lease.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS)).as("the live waiter, after the release")
                    .isPresent().get().satisfies(Lease::close);
        } finally {
            if (child != null) {
                child.destroyForcibly();
            }
            pool.shutdownNow();
        }
    }
}
