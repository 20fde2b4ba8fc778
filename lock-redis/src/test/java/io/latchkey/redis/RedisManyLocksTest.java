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
 * A client holding many grants renews them together: the script calls the server counts ({@code INFO commandstats})
 * while 200 locks, or 200 locks, permits and read-write grants, are held are about those of one lock, at most two a
 * check period, and each grant still stays valid and is still told its own loss.
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
    private static final String PREFIX = RedisLockBackend.DEFAULT_NAMESPACE + ":";

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

    @Test
    void held_permits_and_read_write_grants_are_renewed_in_the_scripts_of_the_locks() throws Exception {
        try (LockClient client = client()) {
            double mixed = scriptsPerPeriod(client, MANY, i -> grant(client, "mixed", i));
            System.out.printf("script calls per check period (%d ms) while %d locks, permits, reads and writes are held:"
                    + " %.2f%n", PERIOD.toMillis(), MANY, mixed);
        }
    }

    /** Script calls per check period while {@code count} locks are held, with the bounds asserted. */
    private static double scriptsPerPeriod(LockClient client, String name, int count) throws Exception {
        return scriptsPerPeriod(client, count, i -> client.lock(name + ":" + i).tryLock(TIMEOUT).orElseThrow());
    }

    /** Script calls per check period while the {@code count} grants {@code take} returns are held, with the bounds asserted. */
    private static double scriptsPerPeriod(LockClient client, int count, Take take) throws Exception {
        List<Lease> leases = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                leases.add(take.apply(i));
            }
            Map<String, Long> before = commandStats(server);
            long start = System.nanoTime();
            Thread.sleep(HOLD.toMillis()); // the span counted; nothing is awaited
            Map<String, Long> grew = delta(before, commandStats(server));
            double periods = (System.nanoTime() - start) / (double) PERIOD.toNanos();
            long scripts = scriptCalls(grew);
            // At most two rounds a period, each one script for up to 500 grants outside a cluster; one round more for
            // a span that cuts a period in two.
            assertThat((double) scripts).as("script calls in %.2f check periods with %d grants held: %s", periods, count,
                    grew).isLessThanOrEqualTo(2 * Math.ceil(periods) + 2);
            for (Lease lease : leases) {
                assertThat(lease.isValid()).as("%s, held for longer than its lease", lease.lockName()).isTrue();
            }
            return scripts / periods;
        } finally {
            leases.forEach(Lease::close);
        }
    }

    /** Takes grant {@code i} of a test's many. */
    private interface Take {
        Lease apply(int i) throws InterruptedException;
    }

    /** Grant {@code i} of a mix of every kind the backend renews: a lock, a permit, a read or a write, in turn. */
    private static Lease grant(LockClient client, String name, int i) throws InterruptedException {
        String own = name + ":" + i;
        return switch (i % 4) {
            case 0 -> client.lock(own).tryLock(TIMEOUT).orElseThrow();
            case 1 -> client.semaphore(own, 2).tryAcquire(TIMEOUT).orElseThrow();
            case 2 -> client.readWriteLock(own).readLock().tryLock(TIMEOUT).orElseThrow();
            default -> client.readWriteLock(own).writeLock().tryLock(TIMEOUT).orElseThrow();
        };
    }

    /** The key whose deletion ends grant {@code i} of {@link #grant}: its lock key, its permit's slot key, its readers or writer key. */
    private static String keyOf(String name, int i) {
        String own = name + ":" + i;
        String tag = RedisKeys.semaphoreTag(PREFIX, own);
        return switch (i % 4) {
            case 0 -> PREFIX + own;
            case 1 -> RedisKeys.permitKey(tag, 0);
            case 2 -> RedisKeys.readersKey(tag);
            default -> RedisKeys.writerKey(tag);
        };
    }

    @Test
    void among_many_grants_renewed_together_each_whose_key_was_deleted_is_lost_and_the_others_are_not()
            throws Exception {
        try (LockClient client = client()) {
            List<Lease> leases = new ArrayList<>();
            try {
                for (int i = 0; i < MANY; i++) {
                    leases.add(grant(client, "lose-one", i));
                }
                // one grant of each kind, from the middle: a lock, a permit, a read, a write
                List<Lease> gone = leases.subList(MANY / 2, MANY / 2 + 4);
                for (int i = MANY / 2; i < MANY / 2 + 4; i++) {
                    assertThat(server.cli(List.of(), "DEL", keyOf("lose-one", i)).trim()).as("DEL %s", keyOf("lose-one", i))
                            .isEqualTo("1");
                }
                // the next round finds each, within a check period and a round trip
                for (Lease lease : gone) {
                    lease.lost().toCompletableFuture().get(PERIOD.plus(TIMEOUT).toMillis(), TimeUnit.MILLISECONDS);
                    assertThat(lease.isValid()).as("%s, whose key was deleted", lease.lockName()).isFalse();
                }
                // two more rounds: every other grant is still confirmed, none is told a loss
                Thread.sleep(PERIOD.multipliedBy(2).toMillis()); // the span observed; nothing is awaited
                for (Lease lease : leases) {
                    if (!gone.contains(lease)) {
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
