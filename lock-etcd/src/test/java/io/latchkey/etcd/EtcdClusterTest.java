package io.latchkey.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.testkit.etcd.EtcdServer;
import io.latchkey.testkit.history.FencedResource;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A three-member cluster loses its leader while a lock is held and others wait: no two valid holders,
 * tokens in grant order, and the lock usable afterwards.
 */
class EtcdClusterTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(5))
            .timeout(Duration.ofSeconds(3)).build();
    private static final Duration LEASE = OPTIONS.lease();
    /** Election, a lease expiring on the new leader, and a round trip: lease + timeout, with the timeout again as slack. */
    private static final Duration FAILOVER = LEASE.plus(OPTIONS.timeout()).plus(OPTIONS.timeout());
    private static EtcdServer cluster;

    @BeforeAll
    static void start() {
        cluster = EtcdServer.startCluster(3);
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static LockClient connect() {
        return LockClient.connect(URI.create(cluster.uri(cluster.endpoints())), OPTIONS);
    }

    @Test
    void losingTheLeaderWhileHeldAndContendedNeverGivesTwoValidHolders() throws Exception {
        String name = "leader-loss";
        History history = new History();
        FencedResource resource = new FencedResource(name);
        ExecutorService executor = Executors.newCachedThreadPool();
        List<LockClient> clients = new ArrayList<>();
        try {
            LockClient holderClient = connect();
            clients.add(holderClient);
            long requested = History.now();
            Lease holder = holderClient.lock(name).tryLock(Duration.ZERO).orElseThrow();
            History.Grant held = history.acquired("holder", name, holder.fencingToken(), requested, History.now());
            held.check(holder::isValid);
            assertThat(resource.write(held)).isTrue();

            Duration contenderWait = FAILOVER.multipliedBy(2);
            CountDownLatch started = new CountDownLatch(2);
            List<Future<Boolean>> contenders = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                LockClient client = connect();
                clients.add(client);
                String actor = "contender" + i;
                DistributedLock lock = client.lock(name);
                contenders.add(executor.submit(() -> {
                    started.countDown();
                    return holdBriefly(lock, actor, contenderWait, history, resource);
                }));
            }
            started.await();
            // the contenders' keys reach the queue within a round trip
            Thread.sleep(OPTIONS.safetyMargin().toMillis());

            AtomicBoolean stopWatching = new AtomicBoolean();
            Future<?> watcher = executor.submit(() -> {
                while (!stopWatching.get() && held.check(holder::isValid)) {
                    Thread.sleep(1);
                }
                return null;
            });
            int leader = cluster.leaderIndex();
            history.fault("leader etcd" + leader + " killed", name, History.now());
            cluster.stopMember(leader);

            Thread.sleep(LEASE.toMillis());
            stopWatching.set(true);
            watcher.get(FAILOVER.toMillis(), TimeUnit.MILLISECONDS);
            long releaseAt = History.now();
            try {
                holder.close();
            } catch (LockException e) {
                // the lease may be gone with the old leader; it expires on its own
            }
            held.released(History.now());

            for (Future<Boolean> c : contenders) {
                assertThat(c.get(contenderWait.plus(FAILOVER).toMillis(), TimeUnit.MILLISECONDS))
                        .as("a contender got the lock after the leader was lost").isTrue();
            }
            LockClient after = connect();
            clients.add(after);
            requested = History.now();
            Optional<Lease> last = after.lock(name).tryLock(FAILOVER);
            assertThat(last).as("the lock with two members left").isPresent();
            try (Lease lease = last.get()) {
                History.Grant g = history.acquired("after", name, lease.fencingToken(), requested, History.now());
                g.check(lease::isValid);
                assertThat(resource.write(g)).as("a write after the leader loss").isTrue();
                g.released(History.now());
            }
            HistoryChecker.assertConsistent(history);
            HistoryChecker.assertAvailableWithin(history, name, releaseAt, FAILOVER);
        } finally {
            for (LockClient c : clients) {
                c.close();
            }
            executor.shutdownNow();
        }
    }

    private static boolean holdBriefly(DistributedLock lock, String actor, Duration wait, History history,
            FencedResource resource) throws InterruptedException {
        long requested = History.now();
        Optional<Lease> got;
        try {
            got = lock.tryLock(wait);
        } catch (LockException e) {
            // the attempt met the election; an application tries again
            requested = History.now();
            got = lock.tryLock(wait);
        }
        if (got.isEmpty()) {
            return false;
        }
        try (Lease lease = got.get()) {
            History.Grant g = history.acquired(actor, lock.name(), lease.fencingToken(), requested, History.now());
            if (g.check(lease::isValid)) {
                resource.write(g);
                g.check(lease::isValid);
            }
            lease.close();
            g.released(History.now());
        } catch (LockException e) {
            // the close may fail during the election; the lock then expires on its own
        }
        return true;
    }
}
