package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.testkit.history.FencedResource;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import io.latchkey.testkit.redis.RedisSentinelCluster;
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
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Loss of the primary of a sentinel-managed pair while a lock is held and contenders wait: the fenced
 * resource accepts no stale write, no two leases are valid at once, and the lock is granted again
 * once the sentinels promoted the replica.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisSentinelFailoverTest {

    private static final Duration LEASE = Duration.ofSeconds(6);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** Sentinels notice the loss after DOWN_AFTER, then agree and promote; a generous bound for a loaded machine. */
    private static final Duration FAILOVER = RedisSentinelCluster.DOWN_AFTER.multipliedBy(30);
    private static final int CONTENDERS = 2;

    private RedisSentinelCluster cluster;
    private final List<LockClient> clients = new ArrayList<>();
    private final ExecutorService executor = Executors.newCachedThreadPool();

    @BeforeAll
    void start() {
        cluster = RedisSentinelCluster.start();
    }

    @AfterAll
    void stop() throws InterruptedException {
        clients.forEach(LockClient::close);
        executor.shutdownNow();
        executor.awaitTermination(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        if (cluster != null) {
            cluster.close();
        }
    }

    private LockClient client() {
        LockOptions options = LockOptions.builder().lease(LEASE).timeout(TIMEOUT)
                .backendOption(RedisConfigs.NAT_MAP, cluster.natMap()).build();
        LockClient client = LockClient.connect(URI.create(cluster.uri(cluster.endpoints())), options);
        clients.add(client);
        return client;
    }

    @Test
    void killing_the_primary_while_held_and_contended_lets_no_stale_write_through() throws Exception {
        String name = "failover";
        History history = new History();
        FencedResource resource = new FencedResource(name);
        long requested = History.now();
        Lease holder = client().lock(name).lock(LEASE);
        History.Grant held = history.acquired("holder", name, holder.fencingToken(), requested, History.now());

        // The holder keeps writing while it finds its lease valid, as a careful application does.
        AtomicBoolean stop = new AtomicBoolean();
        Future<?> writer = executor.submit(() -> {
            while (!stop.get()) {
                if (held.check(holder::isValid)) {
                    resource.write(held);
                }
                Thread.sleep(20); // the pace of the application's writes
            }
            return null;
        });

        Duration contenderPatience = FAILOVER.plus(LEASE.multipliedBy(4));
        CountDownLatch waiting = new CountDownLatch(CONTENDERS);
        List<Future<Boolean>> contenders = new ArrayList<>();
        for (int i = 0; i < CONTENDERS; i++) {
            LockClient client = client();
            String actor = "contender" + i;
            contenders.add(executor.submit(() -> {
                waiting.countDown();
                return contend(client, name, actor, contenderPatience, history, resource);
            }));
        }
        waiting.await();
        Thread.sleep(TIMEOUT.toMillis()); // lets the contenders' acquires reach the primary before it dies

        LockClient probe = client(); // connected before the kill: a new client needs the sentinels to name a live primary
        long killedAt = History.now();
        history.fault("primary killed", name, killedAt);
        cluster.killPrimary();

        // The promoted replica serves locks again: another name can be taken through the sentinels.
        Awaitility.await("a lock granted by the promoted replica").atMost(FAILOVER).pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    try {
                        Optional<Lease> l = probe.lock("probe").tryLock(Duration.ZERO);
                        l.ifPresent(Lease::close);
                        return l.isPresent();
                    } catch (LockException e) {
                        return false;
                    }
                });

        // The holder keeps going for a lease after the failover, then lets go.
        Thread.sleep(LEASE.toMillis());
        stop.set(true);
        writer.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        try {
            holder.close();
        } catch (LockException e) {
            // its key may be gone with the old primary; then nothing is left to release
        }
        held.released(History.now());

        for (Future<Boolean> c : contenders) {
            assertThat(c.get(contenderPatience.plus(TIMEOUT).toMillis(), TimeUnit.MILLISECONDS))
                    .as("a contender got the lock after the failover").isTrue();
        }
        HistoryChecker.assertConsistent(history);
        assertThat(resource.highestToken()).as("the last accepted token is a contender's, above the holder's")
                .isGreaterThan(held.token());
    }

    /** Tries until granted or out of patience, retrying after errors while there is no primary. */
    private static boolean contend(LockClient client, String name, String actor, Duration patience, History history,
            FencedResource resource) throws InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (System.nanoTime() - deadline < 0) {
            long requested = History.now();
            Optional<Lease> got;
            try {
                got = client.lock(name).tryLock(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            } catch (LockException e) {
                continue; // no primary at the moment: an application tries again
            }
            if (got.isEmpty()) {
                return false;
            }
            Lease lease = got.get();
            History.Grant g = history.acquired(actor, name, lease.fencingToken(), requested, History.now());
            if (g.check(lease::isValid)) {
                resource.write(g);
                g.check(lease::isValid);
            }
            try {
                lease.close();
            } catch (LockException e) {
                // expires on its own
            }
            g.released(History.now());
            return true;
        }
        return false;
    }
}
