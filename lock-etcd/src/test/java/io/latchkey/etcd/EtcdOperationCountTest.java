package io.latchkey.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.latchkey.DistributedLock;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.DistributedSemaphore;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.etcd.EtcdServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The operation floor, counted with etcd's own {@code /metrics}, not timed: an uncontended
 * lock+unlock is two Raft commits and two RPCs (the queueing transaction and the deleting one), on one
 * lease per client. The member is this class's own, so that no other client's
 * requests or expiring leases fall into the counted window; keepalives are left out of the count by
 * method (they are no Raft proposals in etcd 3.4 either). A semaphore's permit costs the same as a
 * lock: one transaction that takes a slot key, one that deletes it; so does a read or a write of a
 * read-write lock: one transaction that queues its key, one that deletes it.
 */
class EtcdOperationCountTest {

    private static final Duration LEASE = Duration.ofSeconds(4);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final int CYCLES = 25;
    private static final Pattern STARTED = Pattern.compile(
            "^grpc_server_started_total\\{([^}]*)\\} (\\S+)$", Pattern.MULTILINE);
    private static final Pattern METHOD = Pattern.compile("grpc_method=\"([^\"]+)\"");
    private static final Pattern WATCHERS = Pattern.compile("^etcd_debugging_mvcc_watcher_total (\\S+)$", Pattern.MULTILINE);
    private static final Pattern COMMITTED = Pattern.compile(
            "^etcd_server_proposals_committed_total (\\S+)$", Pattern.MULTILINE);

    private static EtcdServer server;
    private static Client raw;

    @BeforeAll
    static void start() {
        server = EtcdServer.start();
        raw = Client.builder().endpoints(URI.create("http://" + server.endpoints().get(0).getHostString() + ":"
                + server.endpoints().get(0).getPort())).build();
    }

    @AfterAll
    static void stop() {
        if (raw != null) {
            raw.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private static LockClient connect() {
        return LockClient.connect(URI.create(server.uri(server.endpoints())),
                LockOptions.builder().lease(LEASE).timeout(TIMEOUT).namespace("/counted/").build());
    }

    @Test
    void anUncontendedLockAndUnlockIsTwoRaftCommitsAndTwoRpcsOnOneLeasePerClient() throws Exception {
        try (LockClient client = connect()) {
            DistributedLock lock = client.lock("floor");
            long leaseBefore = holderLease(lock);
            Counts before = Counts.read(server);
            for (int i = 0; i < CYCLES; i++) {
                try (Lease lease = lock.tryLock().orElseThrow()) {
                    assertThat(lease.isValid()).isTrue();
                }
            }
            Counts after = Counts.read(server);
            long commits = after.commits - before.commits;
            long rpcs = after.rpcs - before.rpcs;
            org.slf4j.LoggerFactory.getLogger(getClass()).info("{} uncontended lock+unlock cycles: {} Raft commits,"
                    + " {} RPCs besides {} keepalives, by method {}", CYCLES, commits, rpcs,
                    after.keepalives - before.keepalives, after.perMethod(before));
            assertThat(commits).as("Raft commits in %d cycles", CYCLES).isEqualTo(2L * CYCLES);
            assertThat(rpcs).as("RPCs other than keepalives in %d cycles: %s", CYCLES, after.perMethod(before))
                    .isEqualTo(2L * CYCLES);
            // one lease for every grant of the client: no grant, revoke or lease check per lock
            assertThat(holderLease(lock)).isEqualTo(leaseBefore);
        }
    }

    /**
     * etcd keeps a deleted key in its index until a compaction, and the queue's read visits every key name
     * its prefix had since: a lock taken again and again by one client puts one key name, reused once etcd
     * confirmed each delete, with a new create revision (the token) each time. The names are read back
     * from etcd's history, at each grant's revision.
     */
    @Test
    void aLockTakenAgainAndAgainPutsOneKeyNameWithAGrowingToken() throws Exception {
        String prefix = EtcdLockBackend.prefix("/counted/", "reused");
        List<Long> tokens = new ArrayList<>();
        try (LockClient client = connect()) {
            DistributedLock lock = client.lock("reused");
            for (int i = 0; i < CYCLES; i++) {
                try (Lease lease = lock.tryLock().orElseThrow()) {
                    tokens.add(lease.fencingToken());
                }
            }
        }
        assertThat(tokens).as("tokens").isSorted().doesNotHaveDuplicates();
        Set<String> names = new HashSet<>();
        for (long token : tokens) {
            List<KeyValue> kvs = raw.getKVClient().get(bytes(prefix), GetOption.builder().isPrefix(true)
                    .withRevision(token).build()).get(10, TimeUnit.SECONDS).getKvs();
            assertThat(kvs).as("keys under %s at revision %d", prefix, token).hasSize(1);
            assertThat(kvs.get(0).getCreateRevision()).as("create revision of the key at revision %d", token)
                    .isEqualTo(token);
            names.add(kvs.get(0).getKey().toString(StandardCharsets.UTF_8));
        }
        assertThat(names).as("key names the lock's %d grants put under %s", CYCLES, prefix).hasSize(1);
    }

    /**
     * Holding many locks costs etcd per client, not per lock: the client's one lease is kept alive once a
     * renewal period (a third of the lease), and one read-only transaction a period checks up to
     * {@value EtcdGrantCheck#MAX_OPS} of the keys held a period or longer ({@link EtcdGrantCheck}); so 200
     * held locks cost at most one keepalive and two transactions a period, and no Raft commit.
     */
    @Test
    void manyHeldLocksCostOneKeepaliveAndOneCheckPerHundredTwentyEightLocksAPeriod() throws Exception {
        int held = 200;
        long periods = 3;
        Duration period = LEASE.dividedBy(3);
        try (LockClient client = connect()) {
            List<Lease> leases = new ArrayList<>();
            try {
                for (int i = 0; i < held; i++) {
                    leases.add(client.lock("many-" + i).tryLock().orElseThrow());
                }
                // from here on every grant is a renewal period old, and every check reads them all
                Thread.sleep(period.multipliedBy(3).dividedBy(2).toMillis());
                Counts before = Counts.read(server);
                Thread.sleep(period.multipliedBy(periods).toMillis());
                Counts after = Counts.read(server);
                org.slf4j.LoggerFactory.getLogger(getClass()).info("{} held locks for {} renewal periods: {} Raft commits,"
                        + " {} keepalives, {} other RPCs, by method {}", held, periods, after.commits - before.commits,
                        after.keepalives - before.keepalives, after.rpcs - before.rpcs, after.perMethod(before));
                assertThat(after.commits - before.commits).as("Raft commits while %d locks are held", held).isZero();
                assertThat(after.keepalives - before.keepalives).as("keepalives of the client's one lease in %d periods",
                        periods).isBetween(1L, periods + 1);
                long checksPerPeriod = (held + EtcdGrantCheck.MAX_OPS - 1) / EtcdGrantCheck.MAX_OPS;
                assertThat(after.rpcs - before.rpcs).as("RPCs other than keepalives in %d periods: %s", periods,
                        after.perMethod(before)).isLessThanOrEqualTo((periods + 1) * checksPerPeriod);
                assertThat(leases).as("the held leases").allMatch(Lease::isValid);
            } finally {
                leases.forEach(Lease::close);
            }
        }
    }

    @Test
    void anUncontendedPermitAcquireAndReleaseIsTwoRaftCommitsAndTwoRpcs() throws Exception {
        try (LockClient client = connect()) {
            DistributedSemaphore semaphore = client.semaphore("permits", 3);
            Counts before = Counts.read(server);
            for (int i = 0; i < CYCLES; i++) {
                try (SemaphoreLease lease = semaphore.tryAcquire().orElseThrow()) {
                    assertThat(lease.isValid()).isTrue();
                    assertThat(lease.slot()).isZero();
                }
            }
            Counts after = Counts.read(server);
            long commits = after.commits - before.commits;
            long rpcs = after.rpcs - before.rpcs;
            org.slf4j.LoggerFactory.getLogger(getClass()).info("{} uncontended permit acquire+release cycles: {} Raft"
                    + " commits, {} RPCs besides {} keepalives, by method {}", CYCLES, commits, rpcs,
                    after.keepalives - before.keepalives, after.perMethod(before));
            assertThat(commits).as("Raft commits in %d cycles", CYCLES).isEqualTo(2L * CYCLES);
            assertThat(rpcs).as("RPCs other than keepalives in %d cycles: %s", CYCLES, after.perMethod(before))
                    .isEqualTo(2L * CYCLES);
        }
    }

    @Test
    void anUncontendedReadOrWriteIsTwoRaftCommitsAndTwoRpcsAsALock() throws Exception {
        try (LockClient client = connect()) {
            DistributedReadWriteLock rw = client.readWriteLock("modes");
            for (DistributedLock mode : List.of(rw.readLock(), rw.writeLock())) {
                Counts before = Counts.read(server);
                for (int i = 0; i < CYCLES; i++) {
                    try (Lease lease = mode.tryLock().orElseThrow()) {
                        assertThat(lease.isValid()).isTrue();
                    }
                }
                Counts after = Counts.read(server);
                org.slf4j.LoggerFactory.getLogger(getClass()).info("{} uncontended {} cycles: {} Raft commits, {} RPCs"
                        + " besides {} keepalives, by method {}", CYCLES, mode, after.commits - before.commits,
                        after.rpcs - before.rpcs, after.keepalives - before.keepalives, after.perMethod(before));
                assertThat(after.commits - before.commits).as("Raft commits of %s in %d cycles", mode, CYCLES)
                        .isEqualTo(2L * CYCLES);
                assertThat(after.rpcs - before.rpcs).as("RPCs of %s other than keepalives in %d cycles: %s", mode,
                        CYCLES, after.perMethod(before)).isEqualTo(2L * CYCLES);
            }
        }
    }

    @Test
    void aWriterWaitingBehindTwoReadersWatchesOnlyTheNewerAndIsNotWokenByTheOlder() throws Exception {
        try (LockClient older = connect(); LockClient newer = connect(); LockClient writer = connect()) {
            Lease first = older.readWriteLock("herd").readLock().tryLock().orElseThrow();
            Lease second = newer.readWriteLock("herd").readLock().tryLock().orElseThrow();
            // no client of this member watches anything now (the watches of earlier tests end with their clients)
            org.awaitility.Awaitility.await().atMost(TIMEOUT.multipliedBy(2)).until(() -> watchers() == 0);
            CompletableFuture<Optional<Lease>> waiting = writer.readWriteLock("herd").writeLock()
                    .tryLockAsync(LEASE.multipliedBy(3));
            // the writer's one watch is registered in etcd: from here a release it watched would wake it
            org.awaitility.Awaitility.await().atMost(TIMEOUT.multipliedBy(2)).until(() -> watchers() == 1);
            Counts before = Counts.read(server);
            first.close();
            // time for the wake-up and read that the older reader's delete would cause if the writer watched it; a
            // slow machine can only make this test miss such a wake-up, never fail without one
            Thread.sleep(TIMEOUT.toMillis() / 4);
            assertThat(waiting).as("the writer while the newer reader holds").isNotDone();
            second.close();
            try (Lease got = waiting.get(LEASE.plus(TIMEOUT).toMillis(), TimeUnit.MILLISECONDS).orElseThrow()) {
                assertThat(got.fencingToken()).isGreaterThan(second.fencingToken());
            }
            Counts after = Counts.read(server);
            // the two readers' deletes and the writer's one read after the newer reader's delete; a writer woken
            // by the older reader's delete too would have read once more; then the writer's own delete
            assertThat(after.perMethod(before).get("Txn")).as("transactions from the older reader's release to the"
                    + " write's end: %s", after.perMethod(before)).isEqualTo(4L);
        }
    }

    @Test
    void everyPermitOfOneClientCostsOneCommitToTakeAndOneToRelease() throws Exception {
        // the first slot tried is the lowest this client does not hold, so its own permits never collide
        int permits = 3;
        int cycles = 5;
        try (LockClient client = connect()) {
            DistributedSemaphore semaphore = client.semaphore("all-permits", permits);
            Counts before = Counts.read(server);
            for (int i = 0; i < cycles; i++) {
                List<SemaphoreLease> held = new java.util.ArrayList<>();
                for (int p = 0; p < permits; p++) {
                    held.add(semaphore.tryAcquire().orElseThrow());
                }
                assertThat(held.stream().map(SemaphoreLease::slot)).containsExactlyInAnyOrder(0, 1, 2);
                held.forEach(SemaphoreLease::close);
            }
            Counts after = Counts.read(server);
            assertThat(after.commits - before.commits).as("Raft commits of %d x %d permits: %s", cycles, permits,
                    after.perMethod(before)).isEqualTo(2L * permits * cycles);
        }
    }

    @Test
    void aWaiterOfAFullSemaphoreTakesTheFreedSlotWithOneTransactionWhenWokenByTheRelease() throws Exception {
        try (LockClient holder = connect(); LockClient waiter = connect()) {
            SemaphoreLease held = holder.semaphore("full", 1).tryAcquire().orElseThrow();
            Counts before = Counts.read(server);
            CompletableFuture<Optional<SemaphoreLease>> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return waiter.semaphore("full", 1).tryAcquire(LEASE.multipliedBy(3));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            // the waiter's first transaction found the slot taken and it watches: one watch stream of its client
            org.awaitility.Awaitility.await().atMost(TIMEOUT.multipliedBy(2))
                    .until(() -> Counts.read(server).perMethod(before).getOrDefault("Watch", 0L) >= 1);
            held.close();
            try (SemaphoreLease got = waiting.get(LEASE.plus(TIMEOUT).toMillis(), TimeUnit.MILLISECONDS).orElseThrow()) {
                assertThat(got.slot()).isEqualTo(held.slot());
                assertThat(got.fencingToken()).isGreaterThan(held.fencingToken());
            }
            Counts after = Counts.read(server);
            // the waiter's first try (a transaction with a put is a proposal even when its compare fails), the
            // holder's delete, the waiter's second try, its delete; reads are no proposals
            assertThat(after.commits - before.commits).as("Raft commits of a hand-over: %s", after.perMethod(before))
                    .isEqualTo(4);
        }
    }

    @Test
    void aWaiterLearnsItsPredecessorFromTheQueueingTransactionItself() throws Exception {
        try (LockClient holder = connect(); LockClient waiter = connect()) {
            Lease held = holder.lock("contended").tryLock().orElseThrow();
            Counts before = Counts.read(server);
            CompletableFuture<Optional<Lease>> waiting = waiter.lock("contended").tryLockAsync(LEASE.multipliedBy(3));
            org.awaitility.Awaitility.await().atMost(TIMEOUT.multipliedBy(2)).until(() -> raw.getKVClient()
                    .get(bytes("/counted/contended/"), GetOption.builder().isPrefix(true).withCountOnly(true).build())
                    .get(10, TimeUnit.SECONDS).getCount() == 2);
            held.close();
            try (Lease got = waiting.get(LEASE.plus(TIMEOUT).toMillis(), TimeUnit.MILLISECONDS).orElseThrow()) {
                assertThat(got.fencingToken()).isGreaterThan(held.fencingToken());
            }
            Counts after = Counts.read(server);
            // the waiter's put, the holder's delete, the waiter's delete; reads are no proposals
            assertThat(after.commits - before.commits).as("Raft commits of a hand-over: %s", after.perMethod(before))
                    .isEqualTo(3);
        }
    }

    @Test
    void closingTheClientRevokesItsLeaseAndLeavesNoKey() throws Exception {
        LockClient client = connect();
        Lease held = client.lock("closed").tryLock().orElseThrow();
        long lease = holderLease(client.lock("other"));
        assertThat(ttl(lease)).as("TTL of the client's lease while it is open").isPositive();
        client.close();
        assertThat(held.isValid()).isFalse();
        // etcd answers -1 for a lease it does not know: revoked at close, not left to expire
        assertThat(ttl(lease)).as("TTL of the client's lease right after it closed").isEqualTo(-1);
        assertThat(raw.getKVClient().get(bytes("/counted/"), GetOption.builder().isPrefix(true).withCountOnly(true)
                .build()).get(10, TimeUnit.SECONDS).getCount()).isZero();
    }

    /** The lease of the key of a grant of {@code lock}, read while it is held. */
    private static long holderLease(DistributedLock lock) throws Exception {
        try (Lease ignored = lock.tryLock().orElseThrow()) {
            List<KeyValue> kvs = raw.getKVClient().get(bytes(EtcdLockBackend.prefix("/counted/", lock.name())),
                    GetOption.builder().isPrefix(true).build()).get(10, TimeUnit.SECONDS).getKvs();
            assertThat(kvs).hasSize(1);
            return kvs.get(0).getLease();
        }
    }

    /** The watchers etcd has registered, by its own gauge. */
    private static long watchers() {
        Matcher m = WATCHERS.matcher(server.metrics(0));
        assertThat(m.find()).as("etcd_debugging_mvcc_watcher_total in /metrics").isTrue();
        return (long) Double.parseDouble(m.group(1));
    }

    private static long ttl(long lease) throws Exception {
        return raw.getLeaseClient().timeToLive(lease, io.etcd.jetcd.options.LeaseOption.DEFAULT).get(10, TimeUnit.SECONDS)
                .getTTL();
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** Raft commits and started RPCs as etcd counts them, keepalives apart. */
    private static final class Counts {
        final long commits;
        final long rpcs;
        final long keepalives;
        final java.util.Map<String, Long> byMethod = new java.util.TreeMap<>();

        private Counts(String metrics) {
            Matcher c = COMMITTED.matcher(metrics);
            assertThat(c.find()).as("etcd_server_proposals_committed_total in /metrics").isTrue();
            commits = (long) Double.parseDouble(c.group(1));
            Matcher m = STARTED.matcher(metrics);
            while (m.find()) {
                Matcher method = METHOD.matcher(m.group(1));
                if (method.find()) {
                    byMethod.merge(method.group(1), (long) Double.parseDouble(m.group(2)), Long::sum);
                }
            }
            assertThat(byMethod).as("grpc_server_started_total in /metrics").isNotEmpty();
            keepalives = byMethod.getOrDefault("LeaseKeepAlive", 0L);
            rpcs = byMethod.values().stream().mapToLong(Long::longValue).sum() - keepalives;
        }

        static Counts read(EtcdServer server) {
            return new Counts(server.metrics(0));
        }

        /** The methods called since {@code before}, with their counts. */
        java.util.Map<String, Long> perMethod(Counts before) {
            java.util.Map<String, Long> delta = new java.util.TreeMap<>();
            byMethod.forEach((k, v) -> {
                long d = v - before.byMethod.getOrDefault(k, 0L);
                if (d != 0) {
                    delta.put(k, d);
                }
            });
            return delta;
        }
    }
}
