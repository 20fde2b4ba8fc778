package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockLostException;
import io.latchkey.LockOptions;
import io.latchkey.LockState;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.redis.RedisServer;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Redis side of force release and list ({@link RedisAdmin}): which keys a force release deletes and keeps,
 * what the holder is told, which waiters inspect and force release count, and that list takes a name's glob
 * characters literally and lists only grants.
 */
class RedisAdminTest {

    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);

    @RegisterExtension
    static final SharedServer<RedisServer> REDIS = SharedServer.of(RedisLockTest.SERVER_KEY, RedisServer::start);
    private static RedisServer server;

    @BeforeAll
    static void useSharedServer() {
        server = REDIS.get();
    }

    private static LockClient client() {
        return LockClient.connect(URI.create(server.uri(server.endpoints())),
                LockOptions.builder().lease(LEASE).timeout(TIMEOUT).build());
    }

    private static String unique(String what) {
        return what + "-" + Long.toHexString(System.nanoTime());
    }

    @Test
    void force_release_deletes_the_lock_key_alone_and_the_holder_learns_it_was_ended_on_the_backend() throws Exception {
        String name = unique("forced");
        String key = "latchkey:" + name;
        try (LockClient holder = client(); LockClient admin = client()) {
            Lease lease = holder.lock(name).lock(Duration.ZERO);
            LockState ended = admin.lock(name).forceRelease();
            assertThat(ended.token()).hasValue(lease.fencingToken());
            assertThat(server.cli(List.of(), "EXISTS", key)).as("the lock key").isEqualTo("0");
            assertThat(server.cli(List.of(), "GET", RedisKeys.tokenKey(key))).as("the token counter, kept")
                    .isEqualTo(String.valueOf(lease.fencingToken()));
            LockLostException why = lease.lost().toCompletableFuture().get(LEASE.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(why.getMessage()).contains("lock '" + name + "'").contains("redis key '" + key + "'")
                    .contains("ended on the backend").contains("force-released");
            lease.close(); // the release finds another owner or none, and deletes nothing
            try (Lease next = admin.lock(name).lock(Duration.ZERO)) {
                assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
            }
        }
    }

    @Test
    void inspect_counts_the_queue_entries_not_yet_stale_without_touching_the_queue_and_force_release_returns_them()
            throws Exception {
        String name = unique("waited");
        String key = "latchkey:" + name;
        String queue = RedisKeys.waitersKey(key);
        try (LockClient holder = client(); LockClient waiter = client(); LockClient admin = client()) {
            Lease lease = holder.lock(name).lock(Duration.ZERO);
            assertThat(admin.lock(name).inspect().waiters()).as("nobody queued").hasValue(0);
            // the entry of a waiter gone without leaving, whose moment to go stale has passed
            server.cli(List.of(), "ZADD", queue, "1", "gone");
            assertThat(admin.lock(name).inspect().waiters()).as("a stale entry alone").hasValue(0);
            CompletableFuture<Optional<Lease>> waiting = waiter.lock(name).tryLockAsync(Duration.ofSeconds(30));
            Awaitility.await("the waiter counted").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
                    .until(() -> admin.lock(name).inspect().waiters().equals(OptionalInt.of(1)));
            assertThat(server.cli(List.of(), "ZCARD", queue)).as("the queue after inspect: the stale entry stays")
                    .isEqualTo("2");
            LockState ended = admin.lock(name).forceRelease();
            assertThat(ended.token()).hasValue(lease.fencingToken());
            assertThat(ended.waiters()).as("the waiters behind the ended grant").hasValue(1);
            try (Lease next = waiting.get(TIMEOUT.toMillis() * 2, TimeUnit.MILLISECONDS).orElseThrow()) {
                assertThat(admin.lock(name).inspect().waiters()).as("once the waiter holds").hasValue(0);
                assertThat(server.cli(List.of(), "EXISTS", queue)).as("the queue once the waiter holds").isEqualTo("0");
            }
            lease.close();
        } finally {
            server.cli(List.of(), "DEL", queue);
        }
    }

    @Test
    void list_takes_glob_characters_of_the_prefix_literally_and_lists_only_hashes() throws Exception {
        String base = unique("glob");
        List<String> held = List.of(base + "*a", base + "*b", base + "?c", base + "[d]", base + "\\e", base + "[ab]");
        List<Lease> leases = new ArrayList<>();
        try (LockClient client = client()) {
            for (String name : held) {
                leases.add(client.lock(name).lock(Duration.ZERO));
            }
            server.cli(List.of(), "SET", "latchkey:" + base + "*string", "not a lock");
            try {
                assertThat(client.list(base + "*")).containsExactly(base + "*a", base + "*b");
                assertThat(client.list(base + "?")).containsExactly(base + "?c");
                assertThat(client.list(base + "[")).containsExactly(base + "[ab]", base + "[d]");
                assertThat(client.list(base + "\\")).containsExactly(base + "\\e");
                assertThat(client.list(base)).containsExactlyElementsOf(held.stream().sorted().toList());
            } finally {
                server.cli(List.of(), "DEL", "latchkey:" + base + "*string");
                leases.forEach(Lease::close);
            }
        }
        assertThat(RedisAdmin.escape("a*b?c[d]e\\f")).isEqualTo("a\\*b\\?c\\[d\\]e\\\\f");
    }
}
