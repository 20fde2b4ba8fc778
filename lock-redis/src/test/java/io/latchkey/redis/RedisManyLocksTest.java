package io.latchkey.redis;

import static io.latchkey.redis.RedisOperationCountTest.commandStats;
import static io.latchkey.redis.RedisOperationCountTest.delta;
import static io.latchkey.redis.RedisOperationCountTest.scriptCalls;
import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.redis.RedisServer;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A client holding many locks renews them together: the script calls the server counts ({@code INFO commandstats})
 * while 200 locks are held are about those of one lock, at most two a check period, and each lock still stays valid
 * and is still told its own loss.
 *
 * <p>The server is this class's own, so no other test's clients add to its counters.
 */
class RedisManyLocksTest {

    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final Duration MARGIN = Duration.ofMillis(300);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** The backend's check period: {@code (lease - safetyMargin) / 3}. */
    private static final Duration PERIOD = LEASE.minus(MARGIN).dividedBy(3);
    /** How long the locks are held while counted: longer than the lease, so only renewals keep them valid. */
    private static final Duration HOLD = PERIOD.multipliedBy(5);
    private static final int MANY = 200;

    @RegisterExtension
    static final SharedServer<RedisServer> REDIS = SharedServer.of("redis-many-locks", RedisServer::start);
    private static RedisServer server;

    @BeforeAll
    static void useServer() {
        server = REDIS.get();
    }

    private static LockClient client() {
        return LockClient.connect(URI.create(server.uri(server.endpoints())),
                LockOptions.builder().lease(LEASE).safetyMargin(MARGIN).timeout(TIMEOUT).build());
    }

    @Test
    void two_hundred_held_locks_take_about_the_script_calls_of_one() throws Exception {
        try (LockClient client = client()) {
            double one = scriptsPerPeriod(client, "one", 1);
            double many = scriptsPerPeriod(client, "many", MANY);
            System.out.printf("script calls per check period (%d ms) while held: 1 lock %.2f, %d locks %.2f%n",
                    PERIOD.toMillis(), one, MANY, many);
        }
    }

    /** Script calls per check period while {@code count} locks are held, with the bounds asserted. */
    private static double scriptsPerPeriod(LockClient client, String name, int count) throws Exception {
        List<Lease> leases = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                leases.add(client.lock(name + ":" + i).tryLock(TIMEOUT).orElseThrow());
            }
            Map<String, Long> before = commandStats(server);
            long start = System.nanoTime();
            Thread.sleep(HOLD.toMillis()); // the span counted; nothing is awaited
            Map<String, Long> grew = delta(before, commandStats(server));
            double periods = (System.nanoTime() - start) / (double) PERIOD.toNanos();
            long scripts = scriptCalls(grew);
            // At most two rounds a period, each one script for up to 500 keys outside a cluster; one round more for a
            // span that cuts a period in two.
            assertThat((double) scripts).as("script calls in %.2f check periods with %d locks held: %s", periods, count,
                    grew).isLessThanOrEqualTo(2 * Math.ceil(periods) + 2);
            for (Lease lease : leases) {
                assertThat(lease.isValid()).as("%s, held for longer than its lease", lease.lockName()).isTrue();
            }
            return scripts / periods;
        } finally {
            leases.forEach(Lease::close);
        }
    }

    @Test
    void among_many_renewed_together_a_lock_whose_key_was_deleted_is_lost_and_the_others_are_not() throws Exception {
        try (LockClient client = client()) {
            List<Lease> leases = new ArrayList<>();
            try {
                for (int i = 0; i < MANY; i++) {
                    leases.add(client.lock("lose-one:" + i).tryLock(TIMEOUT).orElseThrow());
                }
                Lease gone = leases.get(MANY / 2);
                server.cli(List.of(), "DEL", RedisLockBackend.DEFAULT_NAMESPACE + ":" + gone.lockName());
                // the next round finds it, within a check period and a round trip
                gone.lost().toCompletableFuture().get(PERIOD.plus(TIMEOUT).toMillis(), TimeUnit.MILLISECONDS);
                assertThat(gone.isValid()).as("the lock whose key was deleted").isFalse();
                // two more rounds: every other lock is still confirmed, none is told a loss
                Thread.sleep(PERIOD.multipliedBy(2).toMillis()); // the span observed; nothing is awaited
                for (Lease lease : leases) {
                    if (lease != gone) {
                        assertThat(lease.isValid()).as("%s", lease.lockName()).isTrue();
                        assertThat(lease.lost().toCompletableFuture().isDone()).as("%s told a loss", lease.lockName())
                                .isFalse();
                    }
                }
            } finally {
                leases.forEach(Lease::close);
            }
        }
    }
}
