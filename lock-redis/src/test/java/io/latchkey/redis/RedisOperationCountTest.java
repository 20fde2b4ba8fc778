package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedSemaphore;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.redis.RedisServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The floors, counted with the server's own {@code INFO commandstats}, never timed: two script
 * calls per uncontended lock+unlock and nothing else (and per uncontended permit acquire+release), and no herd when many clients wait, measured
 * against Redisson's {@code RLock} in the same situation on the same server.
 *
 * <p>The server is this class's own, so no other test's clients add to its counters.
 */
class RedisOperationCountTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final Duration MARGIN = Duration.ofMillis(300);
    /**
     * Long enough that no renewal falls inside a lock+unlock: a lease's first renewal comes
     * {@code (lease - safetyMargin) / 3} after its grant, and a cycle that ends without an exception took
     * at most two round trips of {@code timeout} each; seven of them leave that period over two timeouts.
     */
    private static final Duration LEASE = TIMEOUT.multipliedBy(7).plus(MARGIN);
    /**
     * The lease of the hand-over count's clients, four of {@link #LEASE}: the holder's first renewal, a
     * third of it after the grant, must come after all twenty waiters have queued and subscribed, which on
     * a loaded machine once took longer than {@link #LEASE}'s 2.7 s window; every later holder releases at once.
     */
    private static final Duration HAND_OVER_LEASE = LEASE.multipliedBy(4);
    /** Commands a script calls, as commandstats counts them: the calls themselves, whatever their kind. */
    private static final Set<String> SCRIPT_COMMANDS = Set.of("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro");
    private static final int CYCLES = 20;
    private static final int WAITERS = 20;

    @RegisterExtension
    static final SharedServer<RedisServer> REDIS = SharedServer.of("redis-operation-counts", RedisServer::start);
    private static RedisServer server;
    private static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "count-test");
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

    private static LockOptions options() {
        return LockOptions.builder().lease(LEASE).safetyMargin(MARGIN).timeout(TIMEOUT).build();
    }

    /** Calls per command since the server started, from {@code INFO commandstats}. */
    static Map<String, Long> commandStats(RedisServer server) {
        Map<String, Long> calls = new TreeMap<>();
        for (String line : server.cli(List.of(), "INFO", "commandstats").split("\r?\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            String name = line.substring("cmdstat_".length(), line.indexOf(':'));
            for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
                if (field.startsWith("calls=")) {
                    calls.put(name, Long.parseLong(field.substring("calls=".length())));
                }
            }
        }
        return calls;
    }

    /** What each command's count grew by from {@code before} to {@code after}; commands that did not grow left out. */
    static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> d = new TreeMap<>();
        after.forEach((name, n) -> {
            long grew = n - before.getOrDefault(name, 0L);
            if (grew != 0) {
                d.put(name, grew);
            }
        });
        return d;
    }

    static long scriptCalls(Map<String, Long> delta) {
        return delta.entrySet().stream().filter(e -> SCRIPT_COMMANDS.contains(e.getKey())).mapToLong(Map.Entry::getValue).sum();
    }

    @Test
    void an_uncontended_lock_and_unlock_is_two_script_calls_and_nothing_else() throws Exception {
        try (LockClient client = LockClient.connect(URI.create(server.uri(server.endpoints())), options())) {
            DistributedLock lock = client.lock("floor");
            // the first cycles load the scripts into the server's cache and open the connection the rest reuse
            for (int i = 0; i < 3; i++) {
                lock.tryLock(TIMEOUT).orElseThrow().close();
            }
            Map<String, Long> before = commandStats(server);
            for (int i = 0; i < CYCLES; i++) {
                Optional<Lease> lease = lock.tryLock(TIMEOUT);
                assertThat(lease).as("an uncontended lock").isPresent();
                lease.get().close();
            }
            Map<String, Long> grew = delta(before, commandStats(server));

            assertThat(scriptCalls(grew)).as("script calls for %s lock+unlock cycles: %s", CYCLES, grew)
                    .isEqualTo(2L * CYCLES);
            // Inside the scripts, per cycle: the grant's exists, incr, time (latchkey:since), hset, pexpire, zrem
            // (it leaves the waiter queue it never joined) and pttl; the release's hexists, del, exists (of the
            // queue) and publish (Redisson's unlock message). commandstats counts them too; a command the client
            // sent on its own, such as a separate PTTL to confirm the grant, would raise one of these counts or add
            // a name.
            Map<String, Long> expected = new HashMap<>();
            for (String inside : List.of("exists", "exists", "incr", "time", "hset", "pexpire", "zrem", "pttl",
                    "hexists", "del", "publish")) {
                expected.merge(inside, (long) CYCLES, Long::sum);
            }
            expected.put("evalsha", 2L * CYCLES);
            expected.put("info", 1L); // the first INFO commandstats of this test, counted in the second
            Map<String, Long> besidesKeepAlive = new TreeMap<>(grew);
            // Redisson's keep-alive of each pooled connection (every 30 s by default), whatever the locks do
            besidesKeepAlive.remove("ping");
            assertThat(besidesKeepAlive).as("every command the server ran for %s cycles", CYCLES)
                    .containsExactlyInAnyOrderEntriesOf(expected);
        }
    }

    /**
     * A client's waiters on one lock share one subscription, kept a timeout after the last of them: five
     * waits in a row, each ended by the other client's release, subscribe once and never unsubscribe; the
     * channel goes once the client has not waited there for a timeout (the sweep after its last waiter, and at
     * most one more a timeout later).
     */
    @Test
    void a_clients_waits_on_a_lock_subscribe_once_and_unsubscribe_a_timeout_after_the_last() throws Exception {
        String name = "waits:" + System.nanoTime();
        String key = RedisLockBackend.DEFAULT_NAMESPACE + ":" + name;
        // a timeout far above the few milliseconds between two waits here, however loaded the machine
        Duration timeout = TIMEOUT.multipliedBy(2);
        LockOptions keeps = LockOptions.builder().lease(timeout.multipliedBy(3)).safetyMargin(MARGIN).timeout(timeout).build();
        URI uri = URI.create(server.uri(server.endpoints()));
        try (LockClient holder = LockClient.connect(uri, options()); LockClient waiter = LockClient.connect(uri, keeps)) {
            Map<String, Long> before = commandStats(server);
            for (int i = 0; i < 5; i++) {
                Lease held = holder.lock(name).lock(Duration.ZERO);
                Future<Optional<Lease>> waiting = POOL.submit(() -> waiter.lock(name).tryLock(LEASE));
                Awaitility.await("the waiter queued and subscribed").atMost(LEASE.dividedBy(2)).until(() ->
                        queued(server, key) == 1
                                && waiterChannels(RedisKeys.wakeChannel(key)) == 1);
                held.close();
                waiting.get(LEASE.toMillis(), TimeUnit.MILLISECONDS).orElseThrow().close();
            }
            assertThat(waiterChannels(RedisKeys.wakeChannel(key))).as("the client's channel, after its last wait").isEqualTo(1);
            Map<String, Long> grew = delta(before, commandStats(server));
            assertThat(grew.getOrDefault("subscribe", 0L)).as("SUBSCRIBE for five waits: %s", grew).isEqualTo(1);
            assertThat(grew.getOrDefault("unsubscribe", 0L)).as("UNSUBSCRIBE for five waits: %s", grew).isZero();
            Awaitility.await("the channel unsubscribed").atMost(timeout.multipliedBy(3)).pollInterval(Duration.ofMillis(50))
                    .until(() -> waiterChannels(RedisKeys.wakeChannel(key)) == 0);
        }
    }

    @Test
    void an_uncontended_permit_acquire_and_release_is_two_script_calls_and_nothing_else() throws Exception {
        try (LockClient client = LockClient.connect(URI.create(server.uri(server.endpoints())), options())) {
            DistributedSemaphore semaphore = client.semaphore("floor-permits", 3);
            for (int i = 0; i < 3; i++) {
                semaphore.tryAcquire(TIMEOUT).orElseThrow().close();
            }
            Map<String, Long> before = commandStats(server);
            for (int i = 0; i < CYCLES; i++) {
                Optional<SemaphoreLease> lease = semaphore.tryAcquire(TIMEOUT);
                assertThat(lease).as("an uncontended permit").isPresent();
                lease.get().close();
            }
            Map<String, Long> grew = delta(before, commandStats(server));

            assertThat(scriptCalls(grew)).as("script calls for %s acquire+release cycles: %s", CYCLES, grew)
                    .isEqualTo(2L * CYCLES);
            // Inside the scripts, per cycle: the grant's hget (the number of permits: none, the last release
            // deleted it), pttl of slot 0 (free), incr, time (the grant's moment, written with it), set of the
            // slot with its grant and lease, hset of the number, pttl and pexpire of the semaphore's hash, zrem
            // (the queue it never joined) and pttl of the slot; the release's hget, get (the slot's owner), del
            // of the slot, one exists of all three slots, del of the hash (no slot held) and exists of the queue
            // (none: no publish).
            Map<String, Long> expected = new HashMap<>();
            for (String inside : List.of("hget", "pttl", "incr", "time", "set", "hset", "pttl", "pexpire", "zrem",
                    "pttl", "hget", "get", "del", "exists", "del", "exists")) {
                expected.merge(inside, (long) CYCLES, Long::sum);
            }
            expected.put("evalsha", 2L * CYCLES);
            expected.put("info", 1L); // the first INFO commandstats of this test, counted in the second
            Map<String, Long> besidesKeepAlive = new TreeMap<>(grew);
            besidesKeepAlive.remove("ping"); // Redisson's keep-alive, as above
            assertThat(besidesKeepAlive).as("every command the server ran for %s cycles", CYCLES)
                    .containsExactlyInAnyOrderEntriesOf(expected);
        }
    }

    @Test
    void with_twenty_waiting_clients_a_hand_over_takes_four_script_calls_and_no_more_than_redissons_rlock() throws Exception {
        List<RedissonClient> redissons = new ArrayList<>();
        List<LockClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i <= WAITERS; i++) {
                RedissonClient r = redisson();
                redissons.add(r);
                clients.add(RedisLockProvider.client(r, options().toBuilder().lease(HAND_OVER_LEASE).build()));
            }
            long ours = latchkeyHandOver(clients);
            double rlock = rlockHandOver(redissons);
            System.out.printf("script calls per hand-over with %d waiting clients: Latchkey %.2f, Redisson RLock %.2f%n",
                    WAITERS, ours / (double) WAITERS, rlock);
            // README's four per hand-over: each waiter's first attempt and its retry once subscribed (both
            // queue it), its acquire when woken and its release, which wakes the next; plus the first
            // holder's release. No renewal falls inside: the first holder releases before its first renewal
            // (see latchkeyHandOver), every later holder at once.
            assertThat(ours).as("Latchkey's script calls for %d hand-overs", WAITERS).isEqualTo(4L * WAITERS + 1);
            assertThat(ours / (double) WAITERS).as("Latchkey's script calls per hand-over (RLock's: %s)", rlock)
                    .isLessThanOrEqualTo(rlock);
        } finally {
            for (LockClient c : clients) {
                c.close();
            }
            for (RedissonClient r : redissons) {
                r.shutdown();
            }
        }
    }

    /**
     * Script calls of {@link #WAITERS} hand-overs: from the moment the holder holds the lock, through
     * every waiter's arrival, to the last waiter's release.
     */
    private long latchkeyHandOver(List<LockClient> clients) throws Exception {
        String name = "herd";
        String key = RedisLockBackend.DEFAULT_NAMESPACE + ":" + name;
        Lease holder = clients.get(0).lock(name).tryLock(Duration.ZERO).orElseThrow();
        Map<String, Long> before = commandStats(server);
        List<Future<Boolean>> waiters = new ArrayList<>();
        for (int i = 1; i <= WAITERS; i++) {
            DistributedLock lock = clients.get(i).lock(name);
            waiters.add(POOL.submit(() -> {
                Optional<Lease> got = lock.tryLock(HAND_OVER_LEASE);
                got.ifPresent(Lease::close);
                return got.isPresent();
            }));
        }
        // every waiter waits on the server: queued and subscribed, before the holder's first renewal
        // (with a round trip to spare for its release), which would be one more script call
        Duration beforeRenewal = HAND_OVER_LEASE.minus(MARGIN).dividedBy(3).minus(TIMEOUT);
        Awaitility.await("all waiters queued and subscribed").atMost(beforeRenewal).until(() ->
                queued(server, key) == WAITERS
                        && waiterChannels(RedisKeys.wakeChannel(key)) == WAITERS);
        holder.close();
        for (Future<Boolean> w : waiters) {
            assertThat(w.get(HAND_OVER_LEASE.toMillis(), TimeUnit.MILLISECONDS)).as("a waiter got the lock").isTrue();
        }
        return scriptCalls(delta(before, commandStats(server)));
    }

    /** The same with Redisson's RLock, each waiter in its own client, with a lease time of the same length. */
    private double rlockHandOver(List<RedissonClient> redissons) throws Exception {
        String name = "herd-rlock";
        RLock holder = redissons.get(0).getLock(name);
        assertThat(holder.tryLock(0, LEASE.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        Map<String, Long> before = commandStats(server);
        List<Future<Boolean>> waiters = new ArrayList<>();
        for (int i = 1; i <= WAITERS; i++) {
            RLock lock = redissons.get(i).getLock(name);
            waiters.add(POOL.submit(() -> {
                boolean got = lock.tryLock(LEASE.toMillis(), LEASE.toMillis(), TimeUnit.MILLISECONDS);
                if (got) {
                    lock.unlock();
                }
                return got;
            }));
        }
        Awaitility.await("all RLock waiters subscribed").atMost(LEASE.dividedBy(2))
                .until(() -> subscribers("redisson_lock__channel:{" + name + "}") == WAITERS);
        holder.unlock();
        for (Future<Boolean> w : waiters) {
            assertThat(w.get(LEASE.toMillis(), TimeUnit.MILLISECONDS)).as("an RLock waiter got the lock").isTrue();
        }
        return scriptCalls(delta(before, commandStats(server))) / (double) WAITERS;
    }

    /** How many clients listen on wake channels under {@code channel} (one each, whatever their waiters), as the server counts them. */
    private static long waiterChannels(String channel) {
        return wakeChannels(server, channel).size();
    }

    /** The clients' wake channels under {@code channel} subscribed on {@code server}, one per listening client. */
    static List<String> wakeChannels(RedisServer server, String channel) {
        return server.cli(List.of(), "PUBSUB", "CHANNELS", RedisKeys.wakeChannel(channel, "*")).lines()
                .map(String::trim).filter(l -> !l.isBlank()).toList();
    }

    /** The entries in the waiter queue of lock key {@code key} on {@code server}. */
    static long queued(RedisServer server, String key) {
        return Long.parseLong(server.cli(List.of(), "ZCARD", RedisKeys.waitersKey(key)).trim());
    }

    private static long subscribers(String channel) {
        String[] reply = server.cli(List.of(), "PUBSUB", "NUMSUB", channel).split("\r?\n");
        return Long.parseLong(reply[reply.length - 1].trim());
    }

    /** A small Redisson client of its own, as each application process would have. */
    private static RedissonClient redisson() {
        InetSocketAddress a = server.endpoints().get(0);
        Config config = new Config().setNettyThreads(2).setThreads(2);
        config.useSingleServer().setAddress("redis://" + a.getHostString() + ":" + a.getPort())
                .setConnectionMinimumIdleSize(1).setConnectionPoolSize(4)
                .setSubscriptionConnectionMinimumIdleSize(1).setSubscriptionConnectionPoolSize(2)
                .setTimeout((int) TIMEOUT.toMillis());
        return Redisson.create(config);
    }
}
