package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.ServerImages;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import io.latchkey.testkit.kafka.KafkaCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Failover of the group coordinator in a three-broker cluster while a lock is held and contended. */
class KafkaCoordinatorLossTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(6)).build();
    private static KafkaCluster cluster;

    @BeforeAll
    static void startCluster() {
        ServerImages.requireDocker();
        cluster = KafkaCluster.start();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static LockClient client(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        return KafkaLockProvider.newClient(p, OPTIONS);
    }

    private static Duration failoverBound() {
        return OPTIONS.lease().plus(OPTIONS.timeout()).multipliedBy(2);
    }

    @Test
    @DisplayName("stopping the broker that coordinates the lock's group, while the lock is held and others wait:"
            + " no two valid holders, tokens in grant order, and the lock usable afterwards")
    void coordinatorLoss() throws Exception {
        String name = "coordinator-loss:" + Long.toHexString(ThreadLocalRandom.current().nextLong());
        String group = TopicNames.topic(KafkaLockProvider.DEFAULT_PREFIX, name);
        String bootstrap = cluster.bootstrapServers();
        History history = new History();
        ExecutorService pool = Executors.newCachedThreadPool();
        List<LockClient> clients = new ArrayList<>();
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap, "request.timeout.ms", 5_000, "default.api.timeout.ms", 10_000))) {
            LockClient holderClient = client(bootstrap);
            clients.add(holderClient);
            long requested = History.now();
            Lease lease = holderClient.lock(name).tryLock(failoverBound()).orElseThrow();
            History.Grant grant = history.acquired("holder", name, lease.fencingToken(), requested, History.now());
            grant.check(lease::isValid);
            AtomicBoolean stop = new AtomicBoolean();
            Future<?> watcher = pool.submit(() -> {
                while (!stop.get() && grant.check(lease::isValid)) {
                    Thread.sleep(5);
                }
                return null;
            });

            List<Future<?>> waiters = new ArrayList<>();
            for (int i = 1; i <= 2; i++) {
                LockClient c = client(bootstrap);
                clients.add(c);
                String actor = "waiter-" + i;
                waiters.add(pool.submit(() -> waitHoldRelease(c, name, actor, history)));
            }
            Awaitility.await("the waiters in the group").atMost(failoverBound()).pollInterval(Duration.ofMillis(200))
                    .until(() -> admin.describeConsumerGroups(List.of(group)).all().get().get(group).members().size() == 3);
            int coordinator = admin.describeConsumerGroups(List.of(group)).all().get().get(group).coordinator().id();

            history.fault("stop of broker " + coordinator + ", the group coordinator", name, History.now());
            cluster.stopNode(coordinator);
            Thread.sleep(OPTIONS.lease().toMillis()); // the holder's business code runs on through the failover
            stop.set(true);
            watcher.get(OPTIONS.timeout().toMillis(), TimeUnit.MILLISECONDS);
            try {
                lease.close();
            } catch (LockBackendUnavailableException e) {
                // it expires on its own
            }
            grant.released(History.now());
            for (Future<?> w : waiters) {
                w.get(failoverBound().multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS);
            }

            HistoryChecker.assertConsistent(history);
            System.err.println("history of the coordinator-loss test:\n" + HistoryChecker.describe(history.events()));
            try (LockClient after = client(cluster.bootstrapServers())) {
                Optional<Lease> again = after.lock(name).tryLock(failoverBound());
                assertThat(again).as("the lock after the coordinator's broker stopped").isPresent();
                assertThat(again.get().fencingToken()).isGreaterThan(grant.token());
                again.get().close();
            }
        } finally {
            clients.forEach(LockClient::close);
            pool.shutdownNow();
        }
    }

    private static Void waitHoldRelease(LockClient client, String name, String actor, History history) throws Exception {
        long requested = History.now();
        Optional<Lease> got = client.lock(name).tryLock(failoverBound().multipliedBy(2));
        assertThat(got).as("%s's grant", actor).isPresent();
        try (Lease lease = got.get()) {
            History.Grant grant = history.acquired(actor, name, lease.fencingToken(), requested, History.now());
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (System.nanoTime() - until < 0 && grant.check(lease::isValid)) {
                Thread.sleep(5);
            }
            lease.close();
            grant.released(History.now());
        }
        return null;
    }
}
