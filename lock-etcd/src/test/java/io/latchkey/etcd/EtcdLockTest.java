package io.latchkey.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.latchkey.DistributedLock;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.GrantTime;
import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockLostException;
import io.latchkey.LockOptions;
import io.latchkey.LockState;
import io.latchkey.ReadWriteState;
import io.latchkey.SemaphoreLease;
import io.latchkey.spi.HolderStamp;
import io.latchkey.testkit.etcd.EtcdServer;
import io.latchkey.testkit.fault.TcpProxy;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What is particular to etcd: the key queue, lease checks, the layout of read-write locks, the URI, the
 * application's own client, threads.
 */
class EtcdLockTest {

    private static final Duration LEASE = Duration.ofSeconds(4);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** The key under which this module's tests share one etcd member. */
    static final String SERVER_KEY = "etcd";

    @RegisterExtension
    static final EtcdFixture ETCD = new EtcdFixture();

    private static EtcdServer server() {
        return ETCD.server();
    }

    private static Client raw() {
        return ETCD.raw();
    }

    private static LockOptions options() {
        return LockOptions.builder().lease(LEASE).timeout(TIMEOUT).namespace("/etcd-test/").build();
    }

    private static LockClient connect() {
        return LockClient.connect(URI.create(server().uri(server().endpoints())), options());
    }

    private static List<KeyValue> keys(String prefix) throws Exception {
        return raw().getKVClient().get(bytes(prefix), GetOption.builder().isPrefix(true).build())
                .get(10, TimeUnit.SECONDS).getKvs();
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    @Test
    void aWaiterThatGivesUpRemovesItsKeyAtOnceAndNeverHoldsTheLockLater() throws Exception {
        try (LockClient holder = connect(); LockClient waiter = connect(); LockClient third = connect()) {
            Lease held = holder.lock("abandoned").tryLock(Duration.ZERO).orElseThrow();
            Optional<Lease> gaveUp = waiter.lock("abandoned").tryLock(Duration.ofMillis(300));
            assertThat(gaveUp).isEmpty();
            // right after the timed-out wait, only the holder's key is queued: the waiter's went with its lease
            assertThat(keys("/etcd-test/abandoned/")).hasSize(1)
                    .allSatisfy(kv -> assertThat(kv.getCreateRevision()).isEqualTo(held.fencingToken()));
            held.close();
            // were the waiter's key still queued, it would hold the lock until its lease expired
            try (Lease next = third.lock("abandoned").tryLock(Duration.ZERO).orElseThrow()) {
                assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
            }
        }
    }

    @Test
    void aWaiterWhoseLeaseExpiresIsNeverGrantedTheLockOnThatLease() throws Exception {
        // etcd issue 11456: a lock granted on a lease that had expired while its owner waited
        try (LockClient holder = connect(); LockClient waiter = connect()) {
            Lease held = holder.lock("expired-waiter").tryLock(Duration.ZERO).orElseThrow();
            CompletableFuture<Optional<Lease>> waiting = waiter.lock("expired-waiter").tryLockAsync(LEASE.multipliedBy(5));
            await().atMost(TIMEOUT.multipliedBy(2)).until(() -> keys("/etcd-test/expired-waiter/").size() == 2);
            KeyValue first = keys("/etcd-test/expired-waiter/").stream()
                    .filter(kv -> kv.getCreateRevision() != held.fencingToken()).findFirst().orElseThrow();
            raw().getLeaseClient().revoke(first.getLease()).get(10, TimeUnit.SECONDS);
            // the waiter learns at its next keepalive and queues again with a fresh lease
            await().atMost(LEASE.plus(TIMEOUT)).until(() -> keys("/etcd-test/expired-waiter/").stream()
                    .anyMatch(kv -> kv.getCreateRevision() > first.getCreateRevision()));
            held.close();
            try (Lease got = waiting.get(LEASE.plus(TIMEOUT).toMillis(), TimeUnit.MILLISECONDS).orElseThrow()) {
                assertThat(got.fencingToken()).isGreaterThan(first.getCreateRevision());
                KeyValue now = keys("/etcd-test/expired-waiter/").get(0);
                assertThat(now.getCreateRevision()).isEqualTo(got.fencingToken());
                assertThat(raw().getLeaseClient().timeToLive(now.getLease(), io.etcd.jetcd.options.LeaseOption.DEFAULT)
                        .get(10, TimeUnit.SECONDS).getTTL()).isPositive();
            }
        }
    }

    @Test
    void theTokenIsTheCreateRevisionOfTheKeyAndOnlyGrows() throws Exception {
        long previous;
        try (LockClient client = connect(); Lease lease = client.lock("a/b%c").tryLock(Duration.ZERO).orElseThrow()) {
            List<KeyValue> queued = keys("/etcd-test/a%2Fb%25c/");
            assertThat(queued).hasSize(1);
            assertThat(queued.get(0).getCreateRevision()).isEqualTo(lease.fencingToken());
            // a name that is a prefix of another maps to a key prefix that is not
            try (Lease other = client.lock("a").tryLock(Duration.ZERO).orElseThrow()) {
                assertThat(other.fencingToken()).isGreaterThan(lease.fencingToken());
            }
            previous = lease.fencingToken();
        }
        server().restart();
        try (LockClient client = connect(); Lease lease = client.lock("a/b%c").tryLock(Duration.ofSeconds(10)).orElseThrow()) {
            assertThat(lease.fencingToken()).isGreaterThan(previous);
        }
    }

    @Test
    void aLockASemaphoreAndAReadWriteLockOfOneNameAreIndependentAndAModesTokenIsItsKeysCreateRevision()
            throws Exception {
        try (LockClient one = connect(); LockClient two = connect()) {
            try (Lease lock = one.lock("kinds").tryLock(Duration.ZERO).orElseThrow();
                    SemaphoreLease permit = one.semaphore("kinds", 1).tryAcquire().orElseThrow();
                    Lease escaped = one.lock("%rw/kinds").tryLock(Duration.ZERO).orElseThrow();
                    Lease write = two.readWriteLock("kinds").writeLock().tryLock(Duration.ZERO).orElseThrow()) {
                List<KeyValue> writers = keys("/etcd-test/%rw/kinds/w/");
                assertThat(writers).hasSize(1);
                assertThat(writers.get(0).getCreateRevision()).isEqualTo(write.fencingToken());
                assertThat(writers.get(0).getLease()).as("the writer's key is bound to its client's lease").isNotZero();
                assertThat(one.readWriteLock("kinds").readLock().tryLock(Duration.ZERO)).as("a read beside the write")
                        .isEmpty();
                assertThat(keys("/etcd-test/%rw/kinds/r/")).as("a refused reader's key").isEmpty();
            }
            try (Lease read = one.readWriteLock("kinds").readLock().tryLock(Duration.ZERO).orElseThrow();
                    Lease again = two.readWriteLock("kinds").readLock().tryLock(Duration.ZERO).orElseThrow()) {
                assertThat(keys("/etcd-test/%rw/kinds/r/")).extracting(KeyValue::getCreateRevision)
                        .containsExactlyInAnyOrder(read.fencingToken(), again.fencingToken());
            }
            assertThat(keys("/etcd-test/%rw/")).as("keys of read-write locks once every grant closed").isEmpty();
        }
    }

    @Test
    void theHoldersKeyCarriesItsIdentityAndInspectReadsItBackWithoutWritingAnything() throws Exception {
        LockOptions owned = options().toBuilder().owner("etcd-holder").build();
        try (LockClient holder = LockClient.connect(URI.create(server().uri(server().endpoints())), owned);
                LockClient waiter = connect(); LockClient observer = connect()) {
            DistributedLock inspected = observer.lock("inspected");
            assertThat(inspected.inspect()).isEqualTo(LockState.free("inspected"));
            assertThat(keys("/etcd-test/inspected/")).as("keys after inspecting a lock nobody holds").isEmpty();
            try (Lease lease = holder.lock("inspected").tryLock(Duration.ZERO).orElseThrow()) {
                String value = keys("/etcd-test/inspected/").get(0).getValue().toString(StandardCharsets.UTF_8);
                Holder written = Holder.parse(value).orElseThrow(() -> new AssertionError("no holder text: " + value));
                assertThat(written.owner()).isEqualTo("etcd-holder");
                assertThat(written.thread()).isEqualTo(Thread.currentThread().getName());
                // keys of a nested name, of a longer name, of a read-write lock of the same name and of a client
                // whose namespace is this lock's prefix ('/etcd-test/inspected/inner/...') are no waiters
                try (LockClient inner = LockClient.connect(URI.create(server().uri(server().endpoints())),
                                options().toBuilder().namespace("/etcd-test/inspected/").build());
                        Lease nested = waiter.lock("inspected/nested").tryLock(Duration.ZERO).orElseThrow();
                        Lease longer = waiter.lock("inspected2").tryLock(Duration.ZERO).orElseThrow();
                        Lease read = waiter.readWriteLock("inspected").readLock().tryLock(Duration.ZERO).orElseThrow();
                        Lease innerLock = inner.lock("inner").tryLock(Duration.ZERO).orElseThrow()) {
                    assertThat(keys("/etcd-test/inspected/")).as("the holder's key and the inner namespace's").hasSize(2);
                    assertThat(inspected.inspect().waiters()).as("waiters with nobody queued").hasValue(0);
                }
                // a waiter queued behind the holder is not taken for it, and is counted
                CompletableFuture<Optional<Lease>> waiting = waiter.lock("inspected").tryLockAsync(LEASE.multipliedBy(5));
                await().atMost(TIMEOUT.multipliedBy(2)).until(() -> keys("/etcd-test/inspected/").size() == 2);
                LockState state = inspected.inspect();
                assertThat(state.holder()).hasValue(written);
                assertThat(state.waiters()).as("waiters with one queued").hasValue(1);
                assertThat(state.since()).as("the request's time the holder wrote in the key's value: etcd keeps none")
                        .hasValue(new GrantTime(HolderStamp.requestedAt(value).orElseThrow(),
                                GrantTime.Source.HOLDER_AT_REQUEST));
                assertThat(state.token()).hasValue(lease.fencingToken());
                assertThat(state.expiresIn()).hasValueSatisfying(left -> assertThat(left).isPositive()
                        .isLessThanOrEqualTo(LEASE));
                lease.close();
                try (Lease next = waiting.get(LEASE.plus(TIMEOUT).toMillis(), TimeUnit.MILLISECONDS).orElseThrow()) {
                    assertThat(inspected.inspect().token()).as("the token once the waiter holds")
                            .hasValue(next.fencingToken());
                }
            }
            assertThat(inspected.inspect().isHeld()).as("held after every release").isFalse();
            DistributedReadWriteLock rw = observer.readWriteLock("inspected");
            assertThat(rw.inspect()).isEqualTo(ReadWriteState.free("inspected"));
            assertThat(keys("/etcd-test/%rw/")).as("keys after inspecting a read-write lock nobody used").isEmpty();
            try (Lease write = holder.readWriteLock("inspected").writeLock().tryLock(Duration.ZERO).orElseThrow()) {
                String text = keys("/etcd-test/%rw/inspected/w/").get(0).getValue().toString(StandardCharsets.UTF_8);
                assertThat(Holder.parse(text).map(Holder::owner)).as("a writer's key").hasValue("etcd-holder");
                LockState writer = rw.inspect().writerState().orElseThrow();
                assertThat(writer.holder()).as("the holder inspect reads from the writer's key")
                        .isEqualTo(Holder.parse(text));
                assertThat(writer.token()).hasValue(write.fencingToken());
            }
            try (Lease read = holder.readWriteLock("inspected").readLock().tryLock(Duration.ZERO).orElseThrow()) {
                String text = keys("/etcd-test/%rw/inspected/r/").get(0).getValue().toString(StandardCharsets.UTF_8);
                assertThat(rw.inspect().readers()).extracting(LockState::holder).as("the holder inspect reads from the"
                        + " reader's key").containsExactly(Holder.parse(text));
            }
        }
    }

    @Test
    void inspectingThroughACutNetworkIsAnExceptionWithinTheTimeout() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(server().endpoints().get(0));
                LockClient client = LockClient.connect(URI.create(server().uri(List.of(proxy.endpoint()))), options())) {
            DistributedLock lock = client.lock("inspected cut");
            assertThat(lock.inspect().isHeld()).isFalse();
            proxy.cut();
            try {
                long start = System.nanoTime();
                assertThatThrownBy(lock::inspect).isInstanceOf(LockBackendUnavailableException.class)
                        .hasMessageContaining("inspected cut").hasMessageContaining("did not answer within");
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TIMEOUT.multipliedBy(2));
            } finally {
                proxy.restore();
            }
        }
    }

    @Test
    void validityStartsFromTheTtlTheServerReportsNotFromTheOneAskedFor() throws Exception {
        try (LockClient client = connect(); Lease lease = client.lock("ttl").tryLock(Duration.ZERO).orElseThrow()) {
            assertThat(lease.remaining()).isPositive().isLessThanOrEqualTo(LEASE.minus(options().safetyMargin()));
            assertThat(lease.isValid()).isTrue();
        }
    }

    @Test
    void aRevokedLeaseIsSignalledAsLostAtTheNextKeepalive() throws Exception {
        try (LockClient client = connect(); Lease lease = client.lock("revoked").tryLock(Duration.ZERO).orElseThrow()) {
            long leaseId = raw().getKVClient().get(bytes("/etcd-test/revoked/"), GetOption.builder().isPrefix(true).build())
                    .get(10, TimeUnit.SECONDS).getKvs().get(0).getLease();
            raw().getLeaseClient().revoke(leaseId).get(10, TimeUnit.SECONDS);
            // the next keepalive (every third of the lease) answers NOT_FOUND
            LockLostException lost = lease.lost().toCompletableFuture()
                    .get(LEASE.plus(TIMEOUT).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(lost).hasMessageContaining("revoked").hasMessageContaining("NOT_FOUND");
            assertThat(lease.isValid()).isFalse();
            lease.close();
            try (Lease again = client.lock("revoked").tryLock(Duration.ofSeconds(1)).orElseThrow()) {
                assertThat(again.fencingToken()).isGreaterThan(lease.fencingToken());
            }
        }
    }

    @Test
    void theClientsLeaseEndingEndsEveryLockOfTheClientAndTheNextAcquireGetsANewLease() throws Exception {
        try (LockClient client = connect()) {
            Lease first = client.lock("shared-1").tryLock(Duration.ZERO).orElseThrow();
            Lease second = client.lock("shared-2").tryLock(Duration.ZERO).orElseThrow();
            long leaseId = keys("/etcd-test/shared-1/").get(0).getLease();
            // one lease per client: both keys are bound to it
            assertThat(keys("/etcd-test/shared-2/").get(0).getLease()).isEqualTo(leaseId);
            raw().getLeaseClient().revoke(leaseId).get(10, TimeUnit.SECONDS);
            // the next keepalive (every third of the lease) answers NOT_FOUND, and every lock bound to it is lost
            for (Lease lease : List.of(first, second)) {
                LockLostException lost = lease.lost().toCompletableFuture()
                        .get(LEASE.plus(TIMEOUT).toMillis(), TimeUnit.MILLISECONDS);
                assertThat(lost).hasMessageContaining("NOT_FOUND").hasMessageContaining(lease.lockName());
                assertThat(lease.isValid()).isFalse();
                lease.close();
            }
            try (Lease again = client.lock("shared-1").tryLock(Duration.ofSeconds(1)).orElseThrow()) {
                assertThat(again.fencingToken()).isGreaterThan(second.fencingToken());
                assertThat(keys("/etcd-test/shared-1/").get(0).getLease()).isNotEqualTo(leaseId);
            }
        }
    }

    @Test
    void whenTheClientsKeepalivesGoUnansweredEveryLockOfTheClientIsLostByItsDeadline() throws Exception {
        try (LockClient client = connect()) {
            List<Lease> held = List.of(client.lock("unanswered-1").tryLock(Duration.ZERO).orElseThrow(),
                    client.lock("unanswered-2").tryLock(Duration.ZERO).orElseThrow());
            List<CompletableFuture<Long>> lostAt = held.stream().map(l -> l.lost().toCompletableFuture()
                    .thenApply(e -> System.nanoTime())).collect(Collectors.toList());
            server().pause();
            try {
                // nothing confirms the lease from here on: each deadline is fixed, and remaining() tells it
                List<Long> deadlines = held.stream().map(l -> l.remaining().toNanos() + System.nanoTime())
                        .collect(Collectors.toList());
                for (int i = 0; i < held.size(); i++) {
                    long at = lostAt.get(i).get(LEASE.plus(TIMEOUT).toMillis(), TimeUnit.MILLISECONDS);
                    assertThat(held.get(i).isValid()).isFalse();
                    // etcd keeps the key at least safetyMargin past the deadline: the loss is signalled before
                    assertThat(at - deadlines.get(i)).as("lost() of %s after its deadline (ns)", held.get(i).lockName())
                            .isLessThanOrEqualTo(options().safetyMargin().toNanos());
                }
            } finally {
                server().unpause();
            }
            held.forEach(Lease::close);
        }
    }

    @Test
    void theApplicationsOwnClientIsUsedAndLeftOpen() throws Exception {
        try (Client own = Client.builder().endpoints(server().endpoints().stream()
                .map(e -> URI.create("http://" + e.getHostString() + ":" + e.getPort())).collect(Collectors.toList()))
                .build()) {
            try (LockClient client = EtcdLockProvider.client(own, options())) {
                try (Lease lease = client.lock("own client").tryLock(Duration.ZERO).orElseThrow()) {
                    assertThat(keys("/etcd-test/own client/")).hasSize(1);
                }
            }
            // still open: the lock client did not close what it did not create
            assertThat(own.getKVClient().get(bytes("/etcd-test/own client/"), GetOption.builder().isPrefix(true).build())
                    .get(10, TimeUnit.SECONDS).getKvs()).isEmpty();
        }
    }

    @Test
    void badOptionsAreRefusedWithTheRule() {
        String base = server().uri(server().endpoints());
        assertThatThrownBy(() -> LockClient.connect(base + "?lease=1s&timeout=200ms"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease=1s is too short for etcd");
        assertThatThrownBy(() -> LockClient.connect(base + "?sessionTimeout=5s"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sessionTimeout");
    }

    @Test
    void theUriSetsNamespaceAndLease() throws Exception {
        try (LockClient client = LockClient.connect(server().uri(server().endpoints()) + "?namespace=/from-uri/&lease=5500ms&timeout=2s");
                Lease lease = client.lock("uri").tryLock(Duration.ZERO).orElseThrow()) {
            KeyValue kv = keys("/from-uri/uri/").get(0);
            long granted = raw().getLeaseClient().timeToLive(kv.getLease(), io.etcd.jetcd.options.LeaseOption.DEFAULT)
                    .get(10, TimeUnit.SECONDS).getGrantedTTL();
            assertThat(granted).isEqualTo(5);
        }
    }

    @Test
    void closingTheClientStopsEveryThreadItStarted() throws Exception {
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        try (LockClient client = connect(); Lease lease = client.lock("threads").tryLock(Duration.ZERO).orElseThrow()) {
            CompletableFuture<Optional<Lease>> waiting = client.lock("threads-2").tryLockAsync(Duration.ZERO);
            waiting.get(10, TimeUnit.SECONDS).ifPresent(Lease::close);
        }
        await().atMost(TIMEOUT.multipliedBy(3)).untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet().stream()
                .filter(t -> !before.contains(t) && t.isAlive() && !t.getName().startsWith("awaitility"))
                .map(Thread::getName).collect(Collectors.toList())).isEmpty());
    }

    @Test
    void aDeadServerIsAnExceptionWithinWaitPlusTimeout() throws Exception {
        try (EtcdServer dead = EtcdServer.start();
                LockClient client = LockClient.connect(URI.create(dead.uri(dead.endpoints())), options())) {
            dead.stopMember(0);
            Duration wait = Duration.ofSeconds(1);
            long start = System.nanoTime();
            assertThatThrownBy(() -> client.lock("dead").tryLock(wait))
                    .isInstanceOf(LockBackendUnavailableException.class).hasMessageContaining("dead");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(wait.plus(TIMEOUT).plus(TIMEOUT));
        }
    }
}
