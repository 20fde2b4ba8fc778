package io.latchkey.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockLostException;
import io.latchkey.LockOptions;
import io.latchkey.LockRequest;
import io.latchkey.LockResult;
import io.latchkey.LockState;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.testkit.etcd.EtcdServer;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.OptionsUri;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * etcd's own granularity against the promises: whole-second TTLs, the leader's expiry check, its
 * minimum TTL; {@code atLeast} kept by etcd's expiry after the holder is gone; the slot record fenced by
 * the token. Bounds come from the options and {@link EtcdLockProvider#EXPIRY_CHECK_MILLIS}.
 */
class EtcdLeaseBoundsTest {

    private static final Duration LEASE = Duration.ofMillis(4500);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final Duration EXPIRY_CHECK = Duration.ofMillis(EtcdLockProvider.EXPIRY_CHECK_MILLIS);
    /** The waiter's wake-up after etcd removed the key (watch event, one read, the lease check). */
    private static final Duration WAKE_UP = Duration.ofMillis(250);
    private static final String NAMESPACE = "/etcd-bounds/";

    @RegisterExtension
    static final EtcdFixture ETCD = new EtcdFixture();

    private static EtcdServer server() {
        return ETCD.server();
    }

    private static Client raw() {
        return ETCD.raw();
    }

    private static LockOptions options(Duration lease) {
        return LockOptions.builder().lease(lease).timeout(TIMEOUT).namespace(NAMESPACE).build();
    }

    private static LockClient connect(Duration lease) {
        return LockClient.connect(URI.create(server().uri(server().endpoints())), options(lease));
    }

    private static KeyValue holderKey(String lockName) throws Exception {
        List<KeyValue> kvs = raw().getKVClient().get(bytes(EtcdLockBackend.prefix(NAMESPACE, lockName)),
                GetOption.builder().isPrefix(true).build()).get(10, TimeUnit.SECONDS).getKvs();
        assertThat(kvs).as("keys of lock '%s'", lockName).hasSize(1);
        return kvs.get(0);
    }

    private static long grantedTtl(KeyValue kv) throws Exception {
        return raw().getLeaseClient().timeToLive(kv.getLease(), LeaseOption.DEFAULT).get(10, TimeUnit.SECONDS).getGrantedTTL();
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    @Test
    void aLeaseThatIsNotWholeSecondsAsksForTheWholeSecondsThatEndWithinIt() throws Exception {
        // lease minus the expiry check, rounded down: 4500ms -> 4s, 4s -> 3s, 2500ms -> 2s (this etcd's minimum)
        for (Duration lease : List.of(Duration.ofMillis(4500), Duration.ofSeconds(4), Duration.ofMillis(2500))) {
            long expected = (lease.toMillis() - EtcdLockProvider.EXPIRY_CHECK_MILLIS) / 1000;
            try (LockClient client = LockClient.connect(server().uri(server().endpoints()) + "?namespace=" + NAMESPACE
                    + "&timeout=1s&lease=" + lease.toMillis() + "ms");
                    Lease held = client.lock("rounded").tryLock(Duration.ZERO).orElseThrow()) {
                assertThat(grantedTtl(holderKey("rounded"))).as("TTL for lease=%s", lease).isEqualTo(expected);
                // validity runs from the TTL etcd reports, not from lease
                assertThat(held.remaining()).isLessThanOrEqualTo(Duration.ofSeconds(expected));
            }
        }
    }

    @Test
    void aLeaseBelowTheTtlEtcdReallyGrantsIsRefusedNamingItsMinimum() {
        // the fixture's members run with --election-timeout=1000ms: etcd raises TTLs below 2s to 2s
        String uri = server().uri(server().endpoints()) + "?timeout=500ms&lease=2s";
        assertThatThrownBy(() -> LockClient.connect(uri))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease=2s").hasMessageContaining("minimum TTL is 2s")
                .hasMessageContaining("use lease=2500ms or more");
        try (Client own = Client.builder().endpoints(URI.create("http://" + server().endpoints().get(0).getHostString()
                + ":" + server().endpoints().get(0).getPort())).build()) {
            assertThatThrownBy(() -> EtcdLockProvider.client(own, LockOptions.builder().lease(Duration.ofSeconds(2))
                    .timeout(Duration.ofMillis(500)).build()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("minimum TTL is 2s");
        }
    }

    @Test
    void leasesTooShortForWholeSecondsOrForTimeoutAndMarginAreRefused() {
        String base = server().uri(server().endpoints());
        assertThatThrownBy(() -> LockClient.connect(base + "?timeout=200ms&lease=1400ms"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease=1400ms is too short")
                .hasMessageContaining("use lease=1500ms or more");
        assertThatThrownBy(() -> LockClient.connect(base + "?timeout=5s&safetyMargin=1s&lease=6s"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease=6s for lock URI").hasMessageContaining("must be longer than timeout=5s plus safetyMargin=1s (6s)");
    }

    @Test
    void theApplicationsClientHonoursLeaseMarginTimeoutAndNamespace() throws Exception {
        try (Client own = Client.builder().endpoints(URI.create("http://" + server().endpoints().get(0).getHostString()
                + ":" + server().endpoints().get(0).getPort())).build()) {
            LockOptions options = LockOptions.builder().lease(Duration.ofMillis(3500)).safetyMargin(Duration.ofMillis(700))
                    .timeout(Duration.ofSeconds(1)).namespace("/own-options").build();
            try (LockClient client = EtcdLockProvider.client(own, options);
                    Lease held = client.lock("opts").tryLock(Duration.ZERO).orElseThrow()) {
                List<KeyValue> kvs = own.getKVClient().get(bytes("/own-options/opts/"), GetOption.builder().isPrefix(true)
                        .build()).get(10, TimeUnit.SECONDS).getKvs();
                assertThat(kvs).hasSize(1);
                assertThat(grantedTtl(kvs.get(0))).isEqualTo(3);
                assertThat(held.remaining()).isLessThanOrEqualTo(Duration.ofSeconds(3).minus(options.safetyMargin()));
            }
            assertThatThrownBy(() -> EtcdLockProvider.client(own, LockOptions.builder().lease(Duration.ofSeconds(3))
                    .timeout(Duration.ofSeconds(3)).build()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be longer than timeout=3s");
        }
    }

    @Test
    void aKilledHoldersKeyIsGoneWithinLeaseAndAWaiterHasTheLockWithinLeasePlusWakeUp() throws Exception {
        String name = "killed";
        try (ChildHolder child = ChildHolder.start(OptionsUri.of(server().uri(server().endpoints()), options(LEASE)));
                LockClient waiter = connect(LEASE)) {
            assertThat(child.acquire(name, Duration.ZERO, ChildHolder.STARTUP_GUARD).kind()).isEqualTo("acquired");
            // the waiter waits first, so that the bound measures expiry and wake-up, not its connect
            var waiting = waiter.lock(name).tryLockAsync(LEASE.multipliedBy(3));
            String prefix = EtcdLockBackend.prefix(NAMESPACE, name);
            await().atMost(TIMEOUT.multipliedBy(3)).until(() -> raw().getKVClient().get(bytes(prefix),
                    GetOption.builder().isPrefix(true).withCountOnly(true).build()).get(10, TimeUnit.SECONDS).getCount() == 2);
            long killedAt = System.nanoTime();
            child.kill();
            Optional<Lease> got = waiting.get(LEASE.multipliedBy(4).toMillis(), TimeUnit.MILLISECONDS);
            Duration took = Duration.ofNanos(System.nanoTime() - killedAt);
            assertThat(got).isPresent();
            got.get().close();
            assertThat(took).as("from kill -9 of the holder to the waiter's grant, lease=%s", LEASE)
                    .isLessThanOrEqualTo(LEASE.plus(WAKE_UP));
        }
    }

    @Test
    void atLeastOutlivesTheHoldersClientThroughEtcdsOwnExpiry() throws Exception {
        String name = "at-least";
        Duration atLeast = Duration.ofMillis(5500); // longer than the lease's TTL: the key needs a lease of its own
        long start;
        try (LockClient holder = connect(LEASE)) {
            start = System.nanoTime();
            LockResult<Void> ran = holder.lock(name).runLocked(LockRequest.builder().wait(Duration.ZERO).atLeast(atLeast)
                    .build(), lease -> { });
            assertThat(ran.ran()).isTrue();
        } // the client is closed, its keepalives stopped: only etcd keeps the lock now
        KeyValue kept = holderKey(name);
        assertThat(grantedTtl(kept)).isEqualTo(6);
        try (LockClient other = connect(LEASE)) {
            // the key moved to its own lease with its value: the holder is still named, and etcd's TTL is that lease's
            LockState state = other.lock(name).inspect();
            assertThat(state.holder().map(Holder::thread)).hasValue(Thread.currentThread().getName());
            assertThat(state.token()).hasValue(kept.getCreateRevision());
            assertThat(state.expiresIn()).hasValueSatisfying(left -> assertThat(left).isPositive()
                    .isLessThanOrEqualTo(Duration.ofSeconds(6)));
            Optional<Lease> early = other.lock(name).tryLock(Duration.ZERO);
            assertThat(early).as("the lock right after the holder's client closed").isEmpty();
            Optional<Lease> later = other.lock(name).tryLock(atLeast.plus(Duration.ofSeconds(3)));
            Duration freedAfter = Duration.ofNanos(System.nanoTime() - start);
            assertThat(later).isPresent();
            later.get().close();
            assertThat(freedAfter).as("when the lock was free again, atLeast=%s", atLeast)
                    .isGreaterThanOrEqualTo(atLeast)
                    // rounded up to whole seconds, plus the expiry check and the waiter's wake-up
                    .isLessThanOrEqualTo(atLeast.plus(Duration.ofSeconds(1)).plus(EXPIRY_CHECK).plus(WAKE_UP));
        }
    }

    @Test
    void aSlotRecordIsRefusedOnceTheHoldersKeyIsGoneAndAfterALaterHolderWroteIt() throws Exception {
        LockOptions options = options(LEASE);
        String name = "slot-guard";
        try (Client own = Client.builder().endpoints(URI.create("http://" + server().endpoints().get(0).getHostString()
                + ":" + server().endpoints().get(0).getPort())).build();
                EtcdLockBackend backend = new EtcdLockBackend(own, null, false, NAMESPACE,
                        EtcdLockProvider.ttlSeconds(options, "test"), options, "test")) {
            BackendLease first = backend.acquire(name, Deadline.after(Duration.ZERO), new NoEvidence());
            Instant slot = Instant.parse("2026-01-01T00:00:00Z");
            first.recordCompletedSlot(slot);
            first.recordCompletedSlot(slot.plusSeconds(60)); // the same grant may record again
            assertThat(first.lastCompletedSlot()).contains(slot.plusSeconds(60));
            // the holder's key vanishes (its lease expired, say): a stale holder must not write
            raw().getLeaseClient().revoke(holderKey(name).getLease()).get(10, TimeUnit.SECONDS);
            assertThatThrownBy(() -> first.recordCompletedSlot(slot.plusSeconds(120)))
                    .isInstanceOf(LockLostException.class).hasMessageContaining("refused to record slot");
            BackendLease second = backend.acquire(name, Deadline.after(Duration.ZERO), new NoEvidence());
            assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
            assertThat(second.lastCompletedSlot()).contains(slot.plusSeconds(60));
            second.recordCompletedSlot(slot.plusSeconds(180));
            second.release();
            assertThat(raw().getKVClient().get(backend.slotKey(name)).get(10, TimeUnit.SECONDS).getKvs().get(0)
                    .getValue().toString(StandardCharsets.UTF_8)).isEqualTo(slot.plusSeconds(180).toString());
            raw().getKVClient().delete(backend.slotKey(name)).get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void unreachableEtcdIsNamedOnceWithAdviceForItsCause() throws Exception {
        int closed;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        String refused = "etcd://127.0.0.1:" + closed + "?timeout=1s&lease=3s";
        assertThatThrownBy(() -> LockClient.connect(refused))
                .isInstanceOf(io.latchkey.LockBackendUnavailableException.class)
                .hasMessageContaining("connection refused").hasMessageContaining("check that etcd runs there")
                .satisfies(e -> assertThat(e.getMessage().split("127\\.0\\.0\\.1:" + closed, -1)).as(e.getMessage()).hasSize(2))
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("raise the timeout", "PT1S"));
        String unresolvable = "etcd://latchkey-test-host.invalid:2379?timeout=1s&lease=3s";
        assertThatThrownBy(() -> LockClient.connect(unresolvable))
                .isInstanceOf(io.latchkey.LockBackendUnavailableException.class)
                .hasMessageContaining("does not resolve").hasMessageContaining("check the host name")
                .satisfies(e -> assertThat(e.getMessage().split("latchkey-test-host", -1)).as(e.getMessage()).hasSize(2));
    }

    private static final class NoEvidence implements LeaseEvidence {
        @Override
        public void confirmed(long sentAtNanos, Duration serverTtl) {
        }

        @Override
        public void lost(String reason, Throwable cause) {
        }
    }
}
