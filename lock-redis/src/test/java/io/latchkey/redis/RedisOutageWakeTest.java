package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.redis.RedisServer;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A waiter stays within the wake-up of a release across an outage of the server, however long it was:
 * its client subscribes to the wake channel again soon after the server serves, not at the end of a
 * reconnect backoff that grew for the whole outage.
 */
class RedisOutageWakeTest {

    /** Long enough that the holder keeps its lock through the outage and a waiter's own retry is far away. */
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration MARGIN = Duration.ofSeconds(1);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** As the kit's slack: the larger of the safety margin and half the timeout. */
    private static final Duration SLACK = MARGIN.compareTo(TIMEOUT.dividedBy(2)) > 0 ? MARGIN : TIMEOUT.dividedBy(2);
    /** As the kit's wake-up budget: a waiter's notification and its acquire round trip. */
    private static final Duration WAKE_UP = Duration.ofMillis(250);
    /**
     * Longer than a few reconnect attempts of a client that backs off exponentially: Redisson's default
     * waits 50-100 ms, then twice as long each time, so its attempts are seconds apart by then.
     */
    private static final Duration OUTAGE = Duration.ofSeconds(8);

    /** A server of its own: the outage would fail the calls of tests that share one. */
    @RegisterExtension
    static final SharedServer<RedisServer> REDIS = SharedServer.of("redis-outage", RedisServer::start);
    private static RedisServer server;
    private static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "outage-test");
        t.setDaemon(true);
        return t;
    });

    @BeforeAll
    static void useServer() {
        server = REDIS.get();
    }

    @AfterAll
    static void stopPool() {
        POOL.shutdownNow();
    }

    private static LockClient client() {
        LockOptions options = LockOptions.builder().lease(LEASE).safetyMargin(MARGIN).timeout(TIMEOUT).build();
        return LockClient.connect(URI.create(server.uri(server.endpoints())), options);
    }

    /**
     * The holder releases as soon as the server serves again after an outage of {@link #OUTAGE}; the waiter
     * of another client, waiting since before the outage, is granted the lock within the wake-up plus
     * slack of the release having returned, long before its own retry at the holder's expiry.
     */
    @Test
    void a_release_right_after_an_outage_wakes_a_waiter_that_waited_since_before_it() throws Exception {
        String name = "outage:wake";
        String key = RedisLockBackend.DEFAULT_NAMESPACE + ":" + name;
        try (LockClient holderClient = client(); LockClient waiterClient = client()) {
            Lease held = holderClient.lock(name).lock(Duration.ZERO);
            Future<Long> waiter = POOL.submit(() -> {
                Lease got = waiterClient.lock(name).lock(LEASE.multipliedBy(2));
                long grantedAt = System.nanoTime();
                got.close();
                return grantedAt;
            });
            Awaitility.await("the waiter queued and subscribed").atMost(LEASE.dividedBy(2))
                    .until(() -> queued(key) == 1 && subscribers(key) == 1);

            long outageAt = System.nanoTime();
            server.restart(OUTAGE);
            long servingAt = System.nanoTime();
            held.close(); // the holder's client opens a new connection for it, at once
            long releasedAt = System.nanoTime();

            long grantedAt = waiter.get(LEASE.plus(TIMEOUT).plus(SLACK).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(Duration.ofNanos(grantedAt - releasedAt))
                    .as("from the release (returned %s ms after the server served again, after an outage of %s ms)"
                            + " to the grant of the waiter", (releasedAt - servingAt) / 1_000_000,
                            (servingAt - outageAt) / 1_000_000)
                    .isLessThanOrEqualTo(WAKE_UP.plus(SLACK));
        }
    }

    /** Waiters in the lock's queue, as the server holds it. */
    private static long queued(String key) {
        return RedisOperationCountTest.queued(server, key);
    }

    /** Clients listening on wake channels of the lock (one each, whatever their waiters), as the server counts them. */
    private static long subscribers(String key) {
        return RedisOperationCountTest.wakeChannels(server, RedisKeys.wakeChannel(key)).size();
    }
}
