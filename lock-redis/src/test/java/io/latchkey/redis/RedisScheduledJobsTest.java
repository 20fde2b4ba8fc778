package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.LockRequest;
import io.latchkey.LockResult;
import io.latchkey.LockResult.Outcome;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.redis.RedisServer;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/** atLeast by the key's own expiry and once per slot, on one Redis server. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisScheduledJobsTest {

    static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(3)).timeout(Duration.ofSeconds(1)).build();
    static final Instant MIDNIGHT = Instant.parse("2030-01-01T00:00:00Z");

    @RegisterExtension
    static final SharedServer<RedisServer> REDIS = SharedServer.of(RedisLockTest.SERVER_KEY, RedisServer::start);
    RedisServer server;

    @BeforeAll
    void useSharedServer() {
        server = REDIS.get();
    }

    LockClient connect() {
        return LockClient.connect(URI.create(server.uri(server.endpoints())), OPTIONS);
    }

    String key(String name) {
        return RedisLockBackend.DEFAULT_NAMESPACE + ":" + name;
    }

    @Test
    void atLeastOutlivesTheHoldersProcess() throws Exception {
        Duration atLeast = OPTIONS.lease().multipliedBy(2); // past the lease: only the key's TTL can keep it
        long start = System.nanoTime();
        try (LockClient holder = connect()) {
            LockResult<Void> r = holder.lock("sched:least").runLocked(LockRequest.builder().atLeast(atLeast).build(), l -> { });
            assertThat(r.outcome()).isEqualTo(Outcome.RAN);
        } // the client is gone, as if its process exited: nothing of it renews or releases any more
        long ttl = Long.parseLong(server.cli(List.of(), "PTTL", key("sched:least")));
        assertThat(ttl).as("PTTL after the holder closed").isPositive().isLessThanOrEqualTo(atLeast.toMillis());
        try (LockClient other = connect()) {
            assertThat(other.lock("sched:least").tryLock()).isEmpty();
            Optional<Lease> next = other.lock("sched:least").tryLock(atLeast.plus(OPTIONS.timeout()).multipliedBy(2));
            assertThat(next).isPresent();
            assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(atLeast.toNanos());
            next.get().close();
        }
    }

    @Test
    void oncePerSlotAcrossClients() throws Exception {
        try (LockClient a = connect(); LockClient b = connect()) {
            LockRequest midnight = LockRequest.builder().wait(Duration.ofSeconds(5)).slot(MIDNIGHT).build();
            assertThat(a.lock("sched:slot").runLocked(midnight, l -> { }).outcome()).isEqualTo(Outcome.RAN);
            LockResult<Void> again = b.lock("sched:slot").runLocked(midnight, l -> { });
            assertThat(again.outcome()).isEqualTo(Outcome.SLOT_DONE);
            assertThat(again.recordedSlot()).contains(MIDNIGHT);
            LockRequest next = midnight.toBuilder().slot(MIDNIGHT.plusSeconds(86400)).build();
            assertThat(b.lock("sched:slot").runLocked(next, l -> { }).outcome()).isEqualTo(Outcome.RAN);
        }
    }

    @Test
    void aHolderThatLostTheKeyCannotRecordItsSlot() throws Exception {
        try (LockClient paused = connect(); LockClient next = connect()) {
            Instant late = MIDNIGHT.plusSeconds(3600);
            LockResult<Void> r = paused.lock("sched:fenced").runLocked(
                    LockRequest.builder().wait(Duration.ofSeconds(5)).slot(late).interruptOnLoss(false).build(), l -> {
                        // As if this holder paused past its lease: the key expires and another node runs a slot.
                        server.cli(List.of(), "DEL", key("sched:fenced"));
                        LockResult<Void> other = next.lock("sched:fenced").runLocked(
                                LockRequest.builder().wait(Duration.ofSeconds(5)).slot(MIDNIGHT).build(), x -> { });
                        assertThat(other.outcome()).isEqualTo(Outcome.RAN);
                    });
            assertThat(r.outcome()).isEqualTo(Outcome.LOST);
            assertThat(r.ran()).isTrue();
            assertThat(server.cli(List.of(), "HGET", "latchkey_slot:{" + key("sched:fenced") + "}", "slot"))
                    .isEqualTo(MIDNIGHT.toString());
        }
    }
}
