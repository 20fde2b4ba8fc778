package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.GrantTime;
import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockLostException;
import io.latchkey.LockOptions;
import io.latchkey.LockState;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.redis.RedisServer;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** What is particular to the Redis backend: keys, watchdog, ownership checks, the application's own client. */
class RedisLockTest {

    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** The key under which this module's tests share one Redis server. */
    static final String SERVER_KEY = "redis";

    @RegisterExtension
    static final SharedServer<RedisServer> REDIS = SharedServer.of(SERVER_KEY, RedisServer::start);
    private static RedisServer server;

    @BeforeAll
    static void useSharedServer() {
        server = REDIS.get();
    }

    private static LockOptions options() {
        return LockOptions.builder().lease(LEASE).timeout(TIMEOUT).build();
    }

    private static LockClient client() {
        return LockClient.connect(URI.create(server.uri(server.endpoints())), options());
    }

    @Test
    void the_lock_lives_under_the_namespace_as_a_key_that_expires_within_the_lease() throws Exception {
        try (LockClient client = LockClient.connect(URI.create(server.uri(server.endpoints()) + "?namespace=jobs"), options());
             Lease lease = client.lock("report:nightly").lock(Duration.ZERO)) {
            long pttl = Long.parseLong(server.cli(List.of(), "PTTL", "jobs:report:nightly"));
            assertThat(pttl).isPositive().isLessThanOrEqualTo(LEASE.toMillis());
            assertThat(lease.remaining()).isLessThanOrEqualTo(LEASE);
        }
        assertThat(server.cli(List.of(), "EXISTS", "jobs:report:nightly")).isEqualTo("0");
    }

    @Test
    void a_live_holder_stays_valid_far_past_the_lease_even_with_a_safety_margin_of_two_thirds_of_it() throws Exception {
        LockOptions wide = options().toBuilder().safetyMargin(LEASE.multipliedBy(2).dividedBy(3)).timeout(LEASE.dividedBy(6)).build();
        try (LockClient client = LockClient.connect(URI.create(server.uri(server.endpoints())), wide);
             Lease lease = client.lock("watchdog").lock(Duration.ZERO)) {
            long end = System.nanoTime() + LEASE.multipliedBy(3).toNanos();
            while (System.nanoTime() < end) {
                assertThat(lease.isValid()).isTrue();
                Thread.sleep(LEASE.toMillis() / 10); // sampling the lease over time, nothing to wait for
            }
            lease.ensureValid();
            assertThat(lease.lost().toCompletableFuture()).isNotDone();
            long pttl = Long.parseLong(server.cli(List.of(), "PTTL", "latchkey:watchdog"));
            assertThat(pttl).as("the key's remaining life").isPositive().isLessThanOrEqualTo(LEASE.toMillis());
        }
    }

    @Test
    void a_deleted_key_is_signalled_as_loss_within_one_check_period() throws Exception {
        try (LockClient client = client(); Lease lease = client.lock("deleted").lock(Duration.ZERO)) {
            CompletableFuture<LockLostException> lost = lease.lost().toCompletableFuture();
            server.cli(List.of(), "DEL", "latchkey:deleted");
            LockLostException e = lost.get(LEASE.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(e.getMessage()).contains("deleted").contains("redis key 'latchkey:deleted'");
            assertThat(lease.isValid()).isFalse();
            assertThatThrownBy(lease::ensureValid).isInstanceOf(LockLostException.class);
        }
    }

    @Test
    void fencing_tokens_keep_rising_after_the_lock_key_expired_and_across_clients() throws Exception {
        long first;
        try (LockClient a = client(); Lease lease = a.lock("tokens").lock(Duration.ZERO)) {
            first = lease.fencingToken();
        }
        server.cli(List.of(), "DEL", "latchkey:tokens");
        try (LockClient b = client(); Lease lease = b.lock("tokens").lock(Duration.ZERO)) {
            assertThat(lease.fencingToken()).isGreaterThan(first);
        }
    }

    @Test
    void the_holder_and_token_are_fields_beside_the_owner_in_the_lock_hash_and_inspect_reads_them() throws Exception {
        try (LockClient holder = LockClient.connect(URI.create(server.uri(server.endpoints())),
                     options().toBuilder().owner("billing 7").build());
             LockClient observer = client()) {
            assertThat(observer.lock("inspected").inspect()).isEqualTo(LockState.free("inspected"));
            assertThat(server.cli(List.of(), "EXISTS", "latchkey:inspected")).as("a key made by inspect").isEqualTo("0");
            try (Lease lease = holder.lock("inspected").lock(Duration.ZERO)) {
                String text = server.cli(List.of(), "HGET", "latchkey:inspected", "latchkey:holder");
                assertThat(Holder.parse(text).map(Holder::owner)).as("the holder field: " + text).hasValue("billing 7");
                assertThat(server.cli(List.of(), "HGET", "latchkey:inspected", "latchkey:token"))
                        .isEqualTo(Long.toString(lease.fencingToken()));
                LockState state = observer.lock("inspected").inspect();
                assertThat(state.holder().map(Holder::owner)).hasValue("billing 7");
                assertThat(state.holder().map(Holder::thread)).hasValue(Thread.currentThread().getName());
                assertThat(state.token()).hasValue(lease.fencingToken());
                String since = server.cli(List.of(), "HGET", "latchkey:inspected", "latchkey:since");
                assertThat(state.since()).as("the grant's time by the server's TIME, the since field " + since)
                        .hasValue(new GrantTime(Instant.ofEpochMilli(Long.parseLong(since)), GrantTime.Source.BACKEND_AT_GRANT));
                assertThat(state.expiresIn()).hasValueSatisfying(left -> assertThat(left).isPositive()
                        .isLessThanOrEqualTo(LEASE));
            }
            assertThat(observer.lock("inspected").inspect().isHeld()).as("after the release").isFalse();
        }
    }

    @Test
    void a_frozen_server_gives_an_exception_within_wait_plus_timeout() throws Exception {
        try (LockClient client = client()) {
            client.lock("warm-up").lock(Duration.ZERO).close();
            server.pause();
            try {
                Duration wait = Duration.ofSeconds(1);
                long start = System.nanoTime();
                assertThatThrownBy(() -> client.lock("frozen").tryLock(wait))
                        .isInstanceOf(LockBackendUnavailableException.class)
                        .hasMessageContaining("redis key 'latchkey:frozen'");
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                assertThat(took).isLessThan(wait.plus(TIMEOUT).plus(TIMEOUT.dividedBy(2)));
                long inspectStart = System.nanoTime();
                assertThatThrownBy(() -> client.lock("frozen").inspect())
                        .isInstanceOf(LockBackendUnavailableException.class)
                        .hasMessageContaining("reading the holder of lock 'frozen'");
                assertThat(Duration.ofNanos(System.nanoTime() - inspectStart)).as("inspect of a frozen server")
                        .isLessThan(TIMEOUT.plus(TIMEOUT.dividedBy(2)));
            } finally {
                server.unpause();
            }
        }
    }

    @Test
    void a_client_on_the_applications_own_redisson_client_leaves_it_running() throws Exception {
        Config config = new Config().setLockWatchdogTimeout(LEASE.toMillis());
        config.useSingleServer().setAddress("redis://" + server.endpoints().get(0).getHostString() + ":"
                + server.endpoints().get(0).getPort());
        RedissonClient redisson = Redisson.create(config);
        try {
            try (LockClient client = RedisLockProvider.client(redisson, options())) {
                Optional<Lease> lease = client.lock("own-client").tryLock(Duration.ZERO);
                assertThat(lease).isPresent();
                lease.get().close();
            }
            assertThat(redisson.isShutdown()).isFalse();
            assertThat(redisson.getBucket("still-usable").trySet("yes")).isTrue();
        } finally {
            redisson.shutdown();
        }
    }

    /**
     * Earlier versions took locks through Redisson's RFencedLock: the same lock key, owner field format
     * and token counter, so a lock held through either excludes the other during an upgrade, tokens go on
     * rising, and a release of ours wakes a waiter of the older kind.
     */
    @Test
    void a_lock_taken_through_redissons_fenced_lock_as_earlier_versions_did_excludes_ours_and_the_reverse() throws Exception {
        Config config = new Config();
        config.useSingleServer().setAddress("redis://" + server.endpoints().get(0).getHostString() + ":"
                + server.endpoints().get(0).getPort());
        RedissonClient redisson = Redisson.create(config);
        try (LockClient client = client()) {
            org.redisson.api.RFencedLock older = redisson.getFencedLock(RedisLockBackend.DEFAULT_NAMESPACE + ":interop");
            Long olderToken = older.tryLockAndGetToken(0, LEASE.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(olderToken).as("the older kind's grant").isNotNull();
            assertThat(client.lock("interop").tryLock(Duration.ZERO)).as("ours while the older kind holds it").isEmpty();
            LockState olderHeld = client.lock("interop").inspect();
            assertThat(olderHeld.holder()).as("an older kind's holder, which wrote no identity").hasValue(Holder.UNKNOWN);
            assertThat(olderHeld.token()).as("its token, kept apart by the older kind").isEmpty();
            older.unlock();

            Lease ours = client.lock("interop").tryLock(Duration.ZERO).orElseThrow();
            assertThat(ours.fencingToken()).as("our token after the older kind's").isGreaterThan(olderToken);
            CompletableFuture<Long> olderWaiter = CompletableFuture.supplyAsync(() ->
                    older.tryLockAndGetToken(LEASE.multipliedBy(2).toMillis(), LEASE.toMillis(), TimeUnit.MILLISECONDS));
            Awaitility.await("the older kind's waiter subscribed").atMost(LEASE).until(() -> Long.parseLong(
                    server.cli(List.of(), "PUBSUB", "NUMSUB", RedisKeys.redissonChannel("latchkey:interop")).split("\\r?\\n")[1].trim()) == 1);
            assertThat(olderWaiter).as("the older kind while ours holds it").isNotDone();
            long releasedAt = System.nanoTime();
            ours.close();
            Long next = olderWaiter.get(LEASE.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(Duration.ofNanos(System.nanoTime() - releasedAt)).as("our release woke the older kind's waiter")
                    .isLessThan(TIMEOUT.plus(Duration.ofMillis(250)));
            assertThat(next).as("the older kind's token after ours").isGreaterThan(ours.fencingToken());
            // the waiter's thread owns Redisson's lock: release it by force, as that thread is gone
            older.forceUnlock();
        } finally {
            redisson.shutdown();
        }
    }

    @Test
    void a_lease_closed_from_another_thread_releases_the_lock() throws Exception {
        try (LockClient a = client(); LockClient b = client()) {
            Lease lease = a.lock("handoff").lock(Duration.ZERO);
            CompletableFuture.runAsync(lease::close).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            Awaitility.await().atMost(TIMEOUT).until(() -> b.lock("handoff").tryLock(Duration.ZERO).map(l -> {
                l.close();
                return true;
            }).orElse(false));
        }
    }

    /**
     * The root of a red run: waiters whose attempts failed during a server restart could not leave the
     * queue, and the first release after it named one of their entries, waking nobody; the live waiter
     * slept until its own timer. An entry nobody listens to is now passed over.
     */
    @Test
    void a_waiter_gone_without_leaving_the_queue_does_not_swallow_a_release() throws Exception {
        Duration lease = Duration.ofSeconds(10);
        LockOptions longLease = LockOptions.builder().lease(lease).timeout(TIMEOUT).build();
        String name = "ghost:" + System.nanoTime();
        String key = RedisLockBackend.DEFAULT_NAMESPACE + ":" + name;
        URI uri = URI.create(server.uri(server.endpoints()));
        try (LockClient holder = LockClient.connect(uri, longLease); LockClient waiter = LockClient.connect(uri, longLease)) {
            Lease held = holder.lock(name).lock(Duration.ZERO);
            // an entry as a waiter leaves it when its leave never reached the server: live for half a lease,
            // ahead of every waiter queued now (theirs last the holder's time to live plus a timeout)
            queueEntry(key, "gone-without-leaving:1", lease.toMillis() / 2);
            java.util.concurrent.CompletableFuture<Optional<Lease>> waiting = waiter.lock(name).tryLockAsync(lease.multipliedBy(3));
            awaitQueuedAndListening(key, 2, 1, lease.dividedBy(4));
            long released = System.nanoTime();
            held.close();
            Optional<Lease> got = waiting.get(lease.toMillis() * 3, java.util.concurrent.TimeUnit.MILLISECONDS);
            Duration took = Duration.ofNanos(System.nanoTime() - released);
            assertThat(got).isPresent();
            got.get().close();
            // the kit's wake-up bound (WAKE_UP_BUDGET + slack), far below the lease the waiter's own timer waits out
            assertThat(took).as("from the release to the waiter's grant").isLessThanOrEqualTo(Duration.ofMillis(250 + 2500));
            assertThat(server.cli(List.of(), "ZSCORE", RedisKeys.waitersKey(key), "gone-without-leaving:1"))
                    .as("the entry nobody listened to, after the release").isEmpty();
        }
    }

    /**
     * A client keeps its subscription to a lock's wake-ups a timeout after its last waiter there, so a
     * release that names an entry the client left behind is heard by a client with nobody waiting: that
     * client passes it on (drops the entry and wakes the next waiter), or the live waiter behind the entry
     * would sit out its own retry, most of a lease away.
     */
    @Test
    void a_subscription_kept_after_its_waiters_passes_on_a_release_to_an_entry_it_left_behind() throws Exception {
        Duration lease = Duration.ofSeconds(10);
        LockOptions longLease = LockOptions.builder().lease(lease).timeout(TIMEOUT).build();
        // the client that leaves the entry keeps its subscription for its timeout: long enough to last the test
        LockOptions keeps = LockOptions.builder().lease(lease.multipliedBy(2)).timeout(lease).build();
        String name = "kept:" + System.nanoTime();
        String key = RedisLockBackend.DEFAULT_NAMESPACE + ":" + name;
        URI uri = URI.create(server.uri(server.endpoints()));
        try (LockClient holder = LockClient.connect(uri, longLease); LockClient left = LockClient.connect(uri, keeps);
                LockClient waiter = LockClient.connect(uri, longLease)) {
            Lease held = holder.lock(name).lock(Duration.ZERO);
            CompletableFuture<Optional<Lease>> first = left.lock(name).tryLockAsync(lease);
            awaitQueuedAndListening(key, 1, 1, lease.dividedBy(4));
            String kept = listening(key).get(0);
            held.close();
            first.get(lease.toMillis(), TimeUnit.MILLISECONDS).orElseThrow().close();
            assertThat(listening(key)).as("the client's channel, kept after its waiter").containsExactly(kept);

            // an entry of that client's, as one stays when its leave never reached the server, ahead of the
            // waiter queued next (whose entry lasts the holder's time to live plus a timeout)
            String entry = kept.substring(kept.lastIndexOf(':') + 1) + ":1";
            held = holder.lock(name).lock(Duration.ZERO);
            queueEntry(key, entry, lease.toMillis() / 2);
            CompletableFuture<Optional<Lease>> waiting = waiter.lock(name).tryLockAsync(lease.multipliedBy(3));
            awaitQueuedAndListening(key, 2, 2, lease.dividedBy(4));
            assertThat(server.cli(List.of(), "ZRANGE", RedisKeys.waitersKey(key), "0", "0").trim())
                    .as("the entry left behind, first in the queue").isEqualTo(entry);
            long released = System.nanoTime();
            held.close();
            Optional<Lease> got = waiting.get(lease.toMillis() * 3, TimeUnit.MILLISECONDS);
            Duration took = Duration.ofNanos(System.nanoTime() - released);
            assertThat(got).isPresent();
            got.get().close();
            // the kit's wake-up bound (WAKE_UP_BUDGET + slack) and the round trip of the pass-on, far below
            // the lease the waiter's own timer waits out
            assertThat(took).as("from the release to the waiter's grant").isLessThanOrEqualTo(Duration.ofMillis(250 + 2500)
                    .plus(TIMEOUT));
            assertThat(server.cli(List.of(), "ZSCORE", RedisKeys.waitersKey(key), entry))
                    .as("the entry left behind, after the release").isEmpty();
            assertThat(listening(key)).as("the channels subscribed after the release").contains(kept);
        }
    }

    /**
     * A waiter of the Latchkey before clients shared their wake channel listens on a channel of its own
     * entry (the lock's wake channel, a colon and its owner field): a release whose entry's client does not
     * listen on the client's channel publishes there too, so such a waiter is woken during a rolling upgrade.
     */
    @Test
    void a_release_wakes_a_waiter_listening_on_its_entrys_own_channel() throws Exception {
        Duration lease = Duration.ofSeconds(10);
        String name = "older-waiter:" + System.nanoTime();
        String key = RedisLockBackend.DEFAULT_NAMESPACE + ":" + name;
        String entry = "older-client:7";
        Config config = new Config();
        config.useSingleServer().setAddress(server.uri(server.endpoints()));
        RedissonClient raw = Redisson.create(config);
        List<String> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (LockClient holder = LockClient.connect(URI.create(server.uri(server.endpoints())),
                LockOptions.builder().lease(lease).timeout(TIMEOUT).build())) {
            raw.getTopic(RedisKeys.wakeChannel(RedisKeys.wakeChannel(key), entry), org.redisson.client.codec.StringCodec.INSTANCE)
                    .addListener(String.class, (channel, message) -> heard.add(message));
            Lease held = holder.lock(name).lock(Duration.ZERO);
            queueEntry(key, entry, lease.toMillis());
            held.close();
            Awaitility.await("the older waiter's wake-up").atMost(TIMEOUT).pollInterval(Duration.ofMillis(20))
                    .until(() -> !heard.isEmpty());
            assertThat(heard).as("what the older waiter heard").containsExactly(entry);
            assertThat(server.cli(List.of(), "ZSCORE", RedisKeys.waitersKey(key), entry))
                    .as("its entry, which a client heard, left for its next attempt").isNotEmpty();
        } finally {
            raw.shutdown();
        }
    }

    /** An entry that no Latchkey writes, without the colon before the owner id, neither fails a release nor stays. */
    @Test
    void a_queue_entry_without_a_colon_neither_fails_a_release_nor_stays() throws Exception {
        String name = "no-colon:" + System.nanoTime();
        String key = RedisLockBackend.DEFAULT_NAMESPACE + ":" + name;
        try (LockClient client = client()) {
            Lease held = client.lock(name).lock(Duration.ZERO);
            queueEntry(key, "nocolon", LEASE.toMillis());
            held.close();
            assertThat(server.cli(List.of(), "EXISTS", key).trim()).as("the lock key after the release").isEqualTo("0");
            assertThat(server.cli(List.of(), "ZSCORE", RedisKeys.waitersKey(key), "nocolon"))
                    .as("the entry nobody listened to, after the release").isEmpty();
            client.lock(name).tryLock(Duration.ZERO).orElseThrow().close();
        }
    }

    /**
     * Puts {@code entry} in the waiter queue of lock key {@code key}, live for {@code liveMillis} by the server's
     * clock, as a waiter's entry stays when its leave never reached the server.
     */
    private static void queueEntry(String key, String entry, long liveMillis) {
        String[] time = server.cli(List.of(), "TIME").split("\\s+");
        long now = Long.parseLong(time[0]) * 1000 + Long.parseLong(time[1]) / 1000;
        server.cli(List.of(), "ZADD", RedisKeys.waitersKey(key), Long.toString(now + liveMillis), entry);
    }

    /** Waits until lock key {@code key}'s queue has {@code entries} entries and {@code clients} clients listen for its wake-ups. */
    private static void awaitQueuedAndListening(String key, int entries, int clients, Duration within) {
        Awaitility.await().atMost(within).pollInterval(Duration.ofMillis(20))
                .until(() -> RedisOperationCountTest.queued(server, key) == entries
                        && listening(key).size() == clients);
    }

    /** The wake channels of lock key {@code key} subscribed on the server, one per listening client. */
    private static List<String> listening(String key) {
        return RedisOperationCountTest.wakeChannels(server, RedisKeys.wakeChannel(key));
    }
}
