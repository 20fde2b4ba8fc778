package io.latchkey.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.latchkey.DistributedSemaphore;
import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.LockState;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.CrashFailover;
import io.latchkey.testkit.etcd.EtcdServer;
import io.latchkey.testkit.fault.OptionsUri;
import io.latchkey.testkit.fault.TcpProxy;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What is particular to etcd's semaphores: slot keys apart from lock keys, the number of permits in etcd. */
class EtcdSemaphoreTest {

    private static final Duration LEASE = Duration.ofSeconds(4);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final String NAMESPACE = "/etcd-semaphore-test/";

    @RegisterExtension
    static final EtcdFixture ETCD = new EtcdFixture();

    private static EtcdServer server() {
        return ETCD.server();
    }

    private static Client raw() {
        return ETCD.raw();
    }

    private static LockClient connect() {
        return LockClient.connect(URI.create(server().uri(server().endpoints())),
                LockOptions.builder().lease(LEASE).timeout(TIMEOUT).namespace(NAMESPACE).build());
    }

    private static List<KeyValue> keys(String prefix) throws Exception {
        return raw().getKVClient().get(ByteSequence.from(prefix, StandardCharsets.UTF_8),
                GetOption.builder().isPrefix(true).build()).get(10, TimeUnit.SECONDS).getKvs();
    }

    private static String text(ByteSequence b) {
        return b.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aPermitIsASlotKeyApartFromEveryLockQueueEvenOfLocksNamedLikeTheSemaphorePrefix() throws Exception {
        String name = "jobs";
        String semaphorePrefix = EtcdLockBackend.semaphorePrefix(NAMESPACE, name);
        assertThat(semaphorePrefix).isEqualTo(NAMESPACE + "%semaphores/jobs/");
        try (LockClient a = connect(); LockClient b = connect()) {
            SemaphoreLease permit = a.semaphore(name, 2).tryAcquire().orElseThrow();
            // locks whose names spell the semaphores' segment: escaped, they never begin with it
            List<String> lockNames = List.of(name, "%semaphores", "%semaphores/jobs", "%semaphores/jobs/0");
            for (String lockName : lockNames) {
                try (Lease lock = b.lock(lockName).tryLock().orElseThrow()) {
                    List<KeyValue> queue = keys(EtcdLockBackend.prefix(NAMESPACE, lockName));
                    assertThat(queue).as("the queue of lock '%s' while semaphore '%s' is held", lockName, name)
                            .hasSize(1).allSatisfy(kv -> assertThat(kv.getCreateRevision()).isEqualTo(lock.fencingToken()));
                    assertThat(text(queue.get(0).getKey())).doesNotStartWith(NAMESPACE + EtcdLockBackend.SEMAPHORES);
                }
            }
            Lease lock = b.lock(name).tryLock().orElseThrow();
            List<KeyValue> slots = keys(semaphorePrefix);
            assertThat(slots).as("the slot keys of semaphore '%s' while lock '%s' is held", name, name).hasSize(1);
            KeyValue slot = slots.get(0);
            assertThat(text(slot.getKey())).isEqualTo(semaphorePrefix + permit.slot());
            assertThat(slot.getCreateRevision()).as("the token is the slot key's create revision")
                    .isEqualTo(permit.fencingToken());
            assertThat(text(slot.getValue())).as("the number of permits, stored with the slot").startsWith("2 ");
            // then the grant's unique name, then the holder text, which inspect reads from the slot key
            String holderText = text(slot.getValue()).split(" ", 3)[2];
            assertThat(Holder.parse(holderText).map(Holder::thread)).as("the holder in slot key value '%s'",
                    text(slot.getValue())).hasValue(Thread.currentThread().getName());
            LockState inspected = b.semaphore(name, 2).inspect().get(permit.slot());
            assertThat(inspected.holder()).as("the holder inspect reads").isEqualTo(Holder.parse(holderText));
            assertThat(inspected.token()).as("the token inspect reads").hasValue(permit.fencingToken());
            // one etcd lease per client, for its locks and its permits alike
            try (SemaphoreLease second = a.semaphore(name, 2).tryAcquire().orElseThrow();
                    Lease aLock = a.lock("other").tryLock().orElseThrow()) {
                assertThat(second.slot()).isNotEqualTo(permit.slot());
                assertThat(keys(semaphorePrefix).stream().map(KeyValue::getLease).distinct())
                        .containsExactly(keys(EtcdLockBackend.prefix(NAMESPACE, "other")).get(0).getLease());
            }
            permit.close();
            assertThat(keys(semaphorePrefix)).as("slot keys after the last permit closed").isEmpty();
            assertThat(keys(EtcdLockBackend.prefix(NAMESPACE, name))).as("the lock's queue after the permit closed")
                    .hasSize(1);
            lock.close();
        }
    }

    @Test
    void aLeaseThatEtcdNoLongerKnowsLosesThePermitsAndLocksOfTheClientTogether() throws Exception {
        String name = "revoked";
        String semaphorePrefix = EtcdLockBackend.semaphorePrefix(NAMESPACE, name);
        try (LockClient holder = connect(); LockClient other = connect()) {
            SemaphoreLease permit = holder.semaphore(name, 1).tryAcquire().orElseThrow();
            Lease lock = holder.lock(name).tryLock().orElseThrow();
            long lease = keys(semaphorePrefix).get(0).getLease();
            assertThat(keys(EtcdLockBackend.prefix(NAMESPACE, name)).get(0).getLease()).isEqualTo(lease);

            raw().getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);

            // the next keepalive (every third of the TTL) hears NOT_FOUND and ends the session, and with it both
            Duration bound = LEASE.plus(TIMEOUT);
            assertThat(permit.lost().toCompletableFuture().get(bound.toMillis(), TimeUnit.MILLISECONDS))
                    .as("why the permit was lost").isNotNull();
            assertThat(lock.lost().toCompletableFuture().get(bound.toMillis(), TimeUnit.MILLISECONDS))
                    .as("why the lock was lost").isNotNull();
            assertThat(permit.isValid() || lock.isValid()).isFalse();
            try (SemaphoreLease next = other.semaphore(name, 1).tryAcquire().orElseThrow()) {
                assertThat(next.slot()).isEqualTo(permit.slot());
                assertThat(next.fencingToken()).isGreaterThan(permit.fencingToken());
            }
            permit.close();
            lock.close();
            // the holder's client takes permits again, on a new lease
            try (SemaphoreLease again = holder.semaphore(name, 1).tryAcquire().orElseThrow()) {
                assertThat(keys(semaphorePrefix)).singleElement().satisfies(kv -> {
                    assertThat(kv.getLease()).isNotEqualTo(lease);
                    assertThat(kv.getCreateRevision()).isEqualTo(again.fencingToken());
                });
            }
        }
    }

    @Test
    void anotherNumberOfPermitsFromAnotherClientIsRefusedNamingBothAndLeavesNoKey() throws Exception {
        String name = "mismatched";
        String semaphorePrefix = EtcdLockBackend.semaphorePrefix(NAMESPACE, name);
        try (LockClient a = connect(); LockClient b = connect()) {
            SemaphoreLease held = a.semaphore(name, 2).tryAcquire().orElseThrow();
            for (int asked : new int[] {3, 1}) {
                assertThatThrownBy(() -> b.semaphore(name, asked).tryAcquire(TIMEOUT))
                        .as("%d permits while a holder uses 2", asked)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("semaphore '" + name + "'")
                        .hasMessageContaining("in use with 2 permits")
                        .hasMessageContaining("asked for " + asked);
                assertThat(keys(semaphorePrefix)).as("slot keys after the refused request for %d", asked).hasSize(1)
                        .allSatisfy(kv -> assertThat(kv.getCreateRevision()).isEqualTo(held.fencingToken()));
            }
            assertThat(held.isValid()).isTrue();
            Optional<SemaphoreLease> same = b.semaphore(name, 2).tryAcquire();
            assertThat(same).as("a permit of the same number from the other client").isPresent();
            same.get().close();
            held.close();
            // nothing of the semaphore is left in etcd, so another number is a new semaphore
            try (SemaphoreLease three = b.semaphore(name, 3).tryAcquire().orElseThrow()) {
                assertThat(three.permits()).isEqualTo(3);
                assertThatThrownBy(() -> a.semaphore(name, 2).tryAcquire()).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("in use with 3 permits").hasMessageContaining("asked for 2");
            }
            assertThat(keys(semaphorePrefix)).isEmpty();
        }
    }

    @Test
    void aSlotKeyOfAnOlderLatchkeyWithoutHolderTextIsInspectedAsHeldByAnUnknownHolder() throws Exception {
        String name = "older";
        ByteSequence key = ByteSequence.from(EtcdLockBackend.semaphorePrefix(NAMESPACE, name) + 1,
                StandardCharsets.UTF_8);
        long lease = raw().getLeaseClient().grant(LEASE.toSeconds()).get(10, TimeUnit.SECONDS).getID();
        try (LockClient client = connect()) {
            // the value an older Latchkey wrote: the number of permits and the grant's name, no holder
            long token = raw().getKVClient().put(key, ByteSequence.from("2 " + Long.toHexString(lease) + "-1",
                    StandardCharsets.UTF_8), PutOption.builder().withLeaseId(lease).build()).get(10, TimeUnit.SECONDS)
                    .getHeader().getRevision();
            List<LockState> slots = client.semaphore(name, 2).inspect();
            assertThat(slots.get(0)).as("the free slot").isEqualTo(LockState.free(name));
            assertThat(slots.get(1).isHeld()).as("the older key's slot is held").isTrue();
            assertThat(slots.get(1).holder()).as("its holder, which the older key does not name")
                    .hasValue(Holder.UNKNOWN);
            assertThat(slots.get(1).expiresIn()).as("the time left of its lease").hasValueSatisfying(left ->
                    assertThat(left).isPositive().isLessThanOrEqualTo(LEASE));
            assertThat(slots.get(1).token()).as("its token").hasValue(token);
            assertThatThrownBy(() -> client.semaphore(name, 3).inspect()).as("another number of permits")
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("semaphore '" + name + "'")
                    .hasMessageContaining("in use with 2 permits").hasMessageContaining("asked for 3");
        } finally {
            raw().getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
        }
        assertThat(keys(EtcdLockBackend.semaphorePrefix(NAMESPACE, name))).isEmpty();
    }

    @Test
    void inspectingThroughACutNetworkIsAnExceptionWithinTheTimeout() throws Exception {
        String name = "inspected cut";
        try (TcpProxy proxy = TcpProxy.start(server().endpoints().get(0));
                LockClient client = LockClient.connect(URI.create(server().uri(List.of(proxy.endpoint()))),
                        LockOptions.builder().lease(LEASE).timeout(TIMEOUT).namespace(NAMESPACE).build())) {
            DistributedSemaphore semaphore = client.semaphore(name, 2);
            try (SemaphoreLease held = semaphore.tryAcquire().orElseThrow()) {
                assertThat(semaphore.inspect().get(held.slot()).token()).hasValue(held.fencingToken());
                proxy.cut();
                try {
                    long start = System.nanoTime();
                    assertThatThrownBy(semaphore::inspect).isInstanceOf(LockBackendUnavailableException.class)
                            .hasMessageContaining("semaphore '" + name + "'")
                            .hasMessageContaining("did not answer within");
                    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TIMEOUT.multipliedBy(2));
                } finally {
                    proxy.restore();
                }
            }
        }
    }

    @Test
    void aKilledHoldersPermitIsFreeWithinLeasePlusWakeUp() throws Exception {
        // The lease of EtcdLeaseBoundsTest's killed lock holder, a 4 s TTL. With this class's 4 s lease (a 3 s
        // TTL) a holder in a child JVM started moments before once lost its permit before the kill in a
        // loaded build: its slot key was deleted and the waiter took the slot at the next revision. Should
        // a waiter be granted before the kill again, the failure carries each holder's own check and log.
        Duration lease = Duration.ofMillis(4500);
        LockOptions options = LockOptions.builder().lease(lease).timeout(TIMEOUT).namespace(NAMESPACE).build();
        try (LockClient waiter = LockClient.connect(URI.create(server().uri(server().endpoints())), options)) {
            CrashFailover.permit(OptionsUri.of(server().uri(server().endpoints()), options), waiter, "crash-" + System.nanoTime(),
                    2, lease, 2);
        }
    }
}
