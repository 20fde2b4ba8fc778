package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.GrantTime;
import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockLostException;
import io.latchkey.LockOptions;
import io.latchkey.LockState;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.CrashFailover;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.fault.OptionsUri;
import io.latchkey.testkit.redis.RedisServer;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What is particular to the Redis semaphore: its keys beside the locks', one expiring key per slot,
 * the number of permits kept on the server, and the token counter that outlives every slot.
 */
class RedisSemaphoreTest {

    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final String PREFIX = RedisLockBackend.DEFAULT_NAMESPACE + ":";

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
        return "redis-semaphore:" + what + ":" + Long.toHexString(System.nanoTime());
    }

    private static String cli(String... args) {
        return server.cli(List.of(), args);
    }

    @Test
    void each_permit_is_a_key_of_its_own_that_expires_within_the_lease_beside_the_number_of_permits() throws Exception {
        String name = unique("keys");
        String tag = RedisKeys.semaphoreTag(PREFIX, name);
        assertThat(tag).isEqualTo("{" + PREFIX + name + "}");
        try (LockClient client = client();
             SemaphoreLease first = client.semaphore(name, 3).tryAcquire(TIMEOUT).orElseThrow();
             SemaphoreLease second = client.semaphore(name, 3).tryAcquire(TIMEOUT).orElseThrow()) {
            assertThat(List.of(first.slot(), second.slot())).containsExactly(0, 1);
            for (int slot : List.of(0, 1)) {
                long pttl = Long.parseLong(cli("PTTL", RedisKeys.permitKey(tag, slot)));
                assertThat(pttl).as("time to live of slot %s", slot).isPositive().isLessThanOrEqualTo(LEASE.toMillis());
            }
            assertThat(cli("EXISTS", RedisKeys.permitKey(tag, 2))).as("the free slot").isEqualTo("0");
            // the slot key's value is the grant: owner field, token, server TIME (ms) and holder text; inspect reads it
            String[] grant = cli("GET", RedisKeys.permitKey(tag, 1)).trim().split(" ", 4);
            assertThat(grant).as("the grant in slot 1's key").hasSize(4);
            assertThat(grant[1]).as("the token in slot 1's key").isEqualTo(String.valueOf(second.fencingToken()));
            assertThat(Holder.parse(grant[3]).map(Holder::thread)).as("the holder text in slot 1's key: %s", grant[3])
                    .contains(Thread.currentThread().getName());
            LockState inspected = client.semaphore(name, 3).inspect().get(1);
            assertThat(inspected.holder()).as("slot 1's holder as inspect reads it").isEqualTo(Holder.parse(grant[3]));
            assertThat(inspected.token()).hasValue(second.fencingToken());
            assertThat(inspected.since()).as("slot 1's grant time as inspect reads it").contains(new GrantTime(
                    Instant.ofEpochMilli(Long.parseLong(grant[2])), GrantTime.Source.BACKEND_AT_GRANT));
            assertThat(cli("HGET", RedisKeys.semaphoreKey(tag), "permits")).isEqualTo("3");
            assertThat(Long.parseLong(cli("PTTL", RedisKeys.semaphoreKey(tag)))).as("the number's time to live")
                    .isPositive().isLessThanOrEqualTo(LEASE.toMillis());
            assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
            assertThat(client.semaphore(name, 3).tryAcquire().map(l -> {
                l.close();
                return l.slot();
            })).as("the third slot").contains(2);
            // the one token counter of the name, never expiring
            assertThat(cli("GET", RedisKeys.semaphoreTokenKey(tag))).isEqualTo(String.valueOf(first.fencingToken() + 2));
            assertThat(cli("PTTL", RedisKeys.semaphoreTokenKey(tag))).isEqualTo("-1");
        }
        assertThat(RedisSemaphoreContractTest.keysWithTag(server, tag)).as("keys after every permit was released")
                .containsExactly(RedisKeys.semaphoreTokenKey(tag));
    }

    /**
     * Lock names are taken as they are, so a lock may be named like any semaphore key after the
     * namespace: none of them shares a key with the semaphore of the same name, or with any semaphore.
     */
    @Test
    void a_semaphore_and_locks_named_like_it_or_like_its_keys_are_independent_on_the_server() throws Exception {
        String name = unique("apart");
        String tag = RedisKeys.semaphoreTag(PREFIX, name);
        List<String> lockNames = List.of(name, "semaphore:{" + name + "}", "semaphore:{" + name + "}:0",
                RedisKeys.semaphoreKey(tag), RedisKeys.permitKey(tag, 0), RedisKeys.semaphoreTokenKey(tag));
        try (LockClient a = client(); LockClient b = client()) {
            List<Lease> locks = new java.util.ArrayList<>();
            for (String lockName : lockNames) {
                locks.add(a.lock(lockName).tryLock(TIMEOUT).orElseThrow());
            }
            Optional<SemaphoreLease> permit = b.semaphore(name, 1).tryAcquire(TIMEOUT);
            assertThat(permit).as("the only permit of '%s' while locks of those names are held", name).isPresent();
            for (String lockName : lockNames) {
                assertThat(cli("EXISTS", RedisKeys.lockKey(PREFIX, lockName, false))).as("lock key of '%s'", lockName)
                        .isEqualTo("1");
                assertThat(b.lock(lockName).tryLock()).as("lock '%s' while held", lockName).isEmpty();
            }
            // the locks named after the semaphore's keys hold its tag in their own keys, which begin with the namespace
            assertThat(RedisSemaphoreContractTest.keysWithTag(server, tag).stream()
                    .filter(k -> k.startsWith("latchkey_semaphore"))).as("the semaphore's keys")
                    .containsExactlyInAnyOrder(RedisKeys.semaphoreKey(tag), RedisKeys.permitKey(tag, 0),
                            RedisKeys.semaphoreTokenKey(tag));
            for (Lease lock : locks) {
                lock.close();
            }
            assertThat(permit.get().isValid()).as("the permit after the locks were released").isTrue();
            assertThat(a.semaphore(name, 1).tryAcquire()).as("a second permit of one").isEmpty();
            permit.get().close();
            try (Lease lock = b.lock(name).tryLock(TIMEOUT).orElseThrow();
                 SemaphoreLease again = a.semaphore(name, 1).tryAcquire(TIMEOUT).orElseThrow()) {
                assertThat(lock.isValid() && again.isValid()).isTrue();
            }
        }
    }

    @Test
    void another_number_of_permits_from_another_client_is_refused_naming_both_until_no_permit_is_held() throws Exception {
        String name = unique("mismatch");
        try (LockClient a = client(); LockClient b = client()) {
            SemaphoreLease held = a.semaphore(name, 2).tryAcquire(TIMEOUT).orElseThrow();
            assertThatThrownBy(() -> b.semaphore(name, 5).tryAcquire(TIMEOUT))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("semaphore '" + name + "'")
                    .hasMessageContaining("has 2 permits on the server")
                    .hasMessageContaining("asked for 5")
                    .hasMessageContaining("redis key '" + RedisKeys.semaphoreKey(RedisKeys.semaphoreTag(PREFIX, name)) + "'");
            assertThatThrownBy(() -> b.semaphore(name, 5).inspect()).as("inspect with another number")
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has 2 permits on the server")
                    .hasMessageContaining("asked for 5");
            // the refusal came at once, without waiting, and left the holder alone
            assertThat(held.isValid()).isTrue();
            assertThat(b.semaphore(name, 2).tryAcquire().map(l -> {
                l.close();
                return true;
            })).as("the second permit, asked with the same number").contains(true);
            held.close();
            // no permit held: the server no longer knows the semaphore, and another number is a new semaphore
            try (SemaphoreLease five = b.semaphore(name, 5).tryAcquire(TIMEOUT).orElseThrow()) {
                assertThat(five.permits()).isEqualTo(5);
                assertThatThrownBy(() -> a.semaphore(name, 2).tryAcquire())
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has 5 permits")
                        .hasMessageContaining("asked for 2");
            }
        }
    }

    /** A slot key of an older Latchkey holds its owner id alone: held by an unknown holder, and still not taken. */
    @Test
    void inspect_shows_a_slot_key_of_an_older_version_as_held_by_an_unknown_holder() throws Exception {
        String name = unique("older");
        String tag = RedisKeys.semaphoreTag(PREFIX, name);
        cli("HSET", RedisKeys.semaphoreKey(tag), "permits", "2");
        cli("PEXPIRE", RedisKeys.semaphoreKey(tag), String.valueOf(LEASE.toMillis()));
        cli("SET", RedisKeys.permitKey(tag, 0), "older-client:-1", "PX", String.valueOf(LEASE.toMillis()));
        try (LockClient client = client()) {
            LockState older = client.semaphore(name, 2).inspect().get(0);
            assertThat(older.holder()).as("slot 0 of an older version: %s", older).contains(Holder.UNKNOWN);
            assertThat(older.token()).as("its token").isEmpty();
            assertThat(older.since()).as("its grant time").isEmpty();
            try (SemaphoreLease lease = client.semaphore(name, 2).tryAcquire().orElseThrow()) {
                assertThat(lease.slot()).as("the slot a grant takes beside it").isEqualTo(1);
            }
        } finally {
            cli("DEL", RedisKeys.permitKey(tag, 0), RedisKeys.semaphoreKey(tag));
        }
    }

    @Test
    void a_deleted_slot_key_is_signalled_as_loss_and_tokens_keep_rising_past_it() throws Exception {
        String name = unique("deleted");
        String tag = RedisKeys.semaphoreTag(PREFIX, name);
        try (LockClient client = client()) {
            SemaphoreLease lease = client.semaphore(name, 1).tryAcquire(TIMEOUT).orElseThrow();
            CompletableFuture<LockLostException> lost = lease.lost().toCompletableFuture();
            cli("DEL", RedisKeys.permitKey(tag, 0), RedisKeys.semaphoreKey(tag));
            LockLostException e = lost.get(LEASE.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(e.getMessage()).contains(name).contains(RedisKeys.permitKey(tag, 0));
            assertThat(lease.isValid()).isFalse();
            try (SemaphoreLease next = client.semaphore(name, 1).tryAcquire(TIMEOUT).orElseThrow()) {
                assertThat(next.slot()).isZero();
                assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
            }
            lease.close();
        }
    }

    @Test
    void a_killed_holders_permit_is_free_within_the_lease_plus_the_wake_up() throws Exception {
        LockOptions options = LockOptions.builder().lease(LEASE).timeout(TIMEOUT).build();
        try (LockClient waiter = client()) {
            CrashFailover.permit(OptionsUri.of(server.uri(server.endpoints()), options), waiter, unique("crash"), 2, LEASE,
                    2);
        }
    }
}
