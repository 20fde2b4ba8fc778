package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.SemaphoreLease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.spi.LockUri;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.fault.TcpProxy;
import io.latchkey.testkit.redis.RedisCluster;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * What is particular to Redis Cluster: every key of a lock in one hash slot, the replica's
 * acknowledgement of a grant, the application's own cluster client, and a lock whose slot moves to
 * another primary while it is held. On the cluster {@link RedisClusterContractTest} runs the contract on.
 */
class RedisClusterTest {

    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final String PREFIX = RedisLockBackend.DEFAULT_NAMESPACE + ":";

    @RegisterExtension
    static final SharedServer<RedisCluster> CLUSTER = SharedServer.of(RedisClusterContractTest.CLUSTER_KEY,
            RedisCluster::start);
    private static RedisCluster cluster;

    /** A backend on the cluster, for the hash slots it computes without a round trip. */
    private static RedisLockBackend slots;

    @BeforeAll
    static void useSharedCluster() {
        cluster = CLUSTER.get();
        LockUri.Parsed parsed = LockUri.parse(cluster.uri(cluster.endpoints()), options(), new RedisLockProvider());
        slots = (RedisLockBackend) new RedisLockProvider().connect(parsed.uri(), parsed.options());
    }

    @AfterAll
    static void closeSlots() {
        if (slots != null) {
            slots.close();
        }
    }

    private static LockOptions options() {
        return LockOptions.builder().lease(LEASE).timeout(TIMEOUT).build();
    }

    private static LockClient client(LockOptions options) {
        return LockClient.connect(URI.create(cluster.uri(cluster.endpoints())), options);
    }

    private static String unique(String what) {
        return what + ":" + Long.toHexString(System.nanoTime());
    }

    @Test
    void the_hash_slot_the_renewals_group_lock_keys_by_is_the_clusters_own() {
        String marker = unique("keyslot");
        List<String> keys = new ArrayList<>(List.of("", "a", "123456789", "{user1000}.following", "foo{}{bar}",
                "foo{{bar}}zap", "foo{bar}{zap}", "{}", "}{", "{", "na\u00efve", "\u30ed\u30c3\u30af"));
        for (int i = 0; i < 24; i++) {
            keys.add(RedisKeys.lockKey(PREFIX, marker + ":" + i + (i % 3 == 0 ? "{" + i + "}" : ""), true));
        }
        for (String key : keys) {
            assertThat(slots.hashSlot(key)).as("hash slot of key '%s'", key).isEqualTo(cluster.keySlot(key));
        }
    }

    @Test
    void locks_of_one_hash_slot_are_renewed_in_one_script_past_their_lease_and_a_deleted_one_is_lost_alone()
            throws Exception {
        // Three names whose lock keys share a hash slot: so the renewals check them in one script on its node.
        String marker = unique("same-slot");
        java.util.Map<Integer, List<String>> bySlot = new java.util.HashMap<>();
        List<String> names = null;
        for (int i = 0; names == null; i++) {
            String name = marker + ":" + i;
            List<String> same = bySlot.computeIfAbsent(slots.hashSlot(RedisKeys.lockKey(PREFIX, name, true)),
                    s -> new ArrayList<>());
            same.add(name);
            if (same.size() == 3) {
                names = same;
            }
        }
        LockOptions options = options();
        Duration period = LEASE.minus(options.safetyMargin()).dividedBy(3);
        try (LockClient client = client(options)) {
            List<Lease> leases = new ArrayList<>();
            try {
                for (String name : names) {
                    leases.add(client.lock(name).lock(TIMEOUT));
                }
                Thread.sleep(LEASE.plus(period).toMillis()); // the span observed; nothing is awaited
                for (Lease lease : leases) {
                    assertThat(lease.isValid()).as("%s, held past its lease", lease.lockName()).isTrue();
                }
                Lease gone = leases.get(1);
                cluster.cliFollowing("DEL", RedisKeys.lockKey(PREFIX, gone.lockName(), true));
                gone.lost().toCompletableFuture().get(period.plus(TIMEOUT).toMillis(), TimeUnit.MILLISECONDS);
                Thread.sleep(period.multipliedBy(2).toMillis()); // two more rounds for the others
                assertThat(leases.get(0).isValid()).as("%s", leases.get(0).lockName()).isTrue();
                assertThat(leases.get(2).isValid()).as("%s", leases.get(2).lockName()).isTrue();
            } finally {
                leases.forEach(Lease::close);
            }
        }
    }

    @Test
    void a_lock_permits_and_read_write_grants_of_one_hash_slot_are_renewed_together_and_a_deleted_permit_is_lost_alone()
            throws Exception {
        // A lock, a semaphore and a read-write lock whose keys fall in one hash slot: their renewals go in one script.
        String marker = unique("mixed-slot");
        String lock = marker + ":lock";
        int slot = slots.hashSlot(RedisKeys.lockKey(PREFIX, lock, true));
        String semaphore = sameSlot(marker + ":semaphore:", slot, n -> RedisKeys.permitKey(RedisKeys.semaphoreTag(PREFIX, n), 0));
        String readWrite = sameSlot(marker + ":rw:", slot, n -> RedisKeys.readersKey(RedisKeys.semaphoreTag(PREFIX, n)));
        LockOptions options = options();
        Duration period = LEASE.minus(options.safetyMargin()).dividedBy(3);
        try (LockClient client = client(options)) {
            List<Lease> leases = new ArrayList<>();
            try {
                leases.add(client.lock(lock).lock(TIMEOUT));
                leases.add(client.semaphore(semaphore, 2).acquire(TIMEOUT));
                leases.add(client.semaphore(semaphore, 2).acquire(TIMEOUT));
                leases.add(client.readWriteLock(readWrite).readLock().lock(TIMEOUT));
                Thread.sleep(LEASE.plus(period).toMillis()); // the span observed; nothing is awaited
                for (Lease lease : leases) {
                    assertThat(lease.isValid()).as("%s, held past its lease", lease.lockName()).isTrue();
                }
                Lease gone = leases.get(2);
                cluster.cliFollowing("DEL", RedisKeys.permitKey(RedisKeys.semaphoreTag(PREFIX, semaphore),
                        ((SemaphoreLease) gone).slot()));
                gone.lost().toCompletableFuture().get(period.plus(TIMEOUT).toMillis(), TimeUnit.MILLISECONDS);
                Thread.sleep(period.multipliedBy(2).toMillis()); // two more rounds for the others
                for (Lease lease : leases) {
                    if (lease != gone) {
                        assertThat(lease.isValid()).as("%s", lease.lockName()).isTrue();
                    }
                }
            } finally {
                leases.forEach(Lease::close);
            }
        }
    }

    /** The first name {@code prefix + i} whose {@code key} falls in hash slot {@code slot}. */
    private static String sameSlot(String prefix, int slot, java.util.function.UnaryOperator<String> key) {
        for (int i = 0; ; i++) {
            if (slots.hashSlot(key.apply(prefix + i)) == slot) {
                return prefix + i;
            }
        }
    }

    @Test
    void every_key_of_a_lock_lives_in_the_hash_slot_of_its_lock_key_whatever_braces_the_name_holds() throws Exception {
        String marker = unique("slots");
        List<String> suffixes = List.of("plain", "a{b}", "{a:b}", "a}b", "a{", "a{}b", "}{", "{}", "a{b}c{d}");
        try (LockClient client = client(options())) {
            for (int i = 0; i < suffixes.size(); i++) {
                String suffix = suffixes.get(i);
                String name = marker + ":" + i + ":" + suffix;
                String lockKey = RedisKeys.lockKey(PREFIX, name, true);
                try (Lease lease = client.lock(name).lock(TIMEOUT)) {
                    assertThat(lease.isValid()).isTrue();
                    // every key the grant wrote, found on the primaries themselves rather than predicted
                    List<String> written = keysMatching("*" + marker + ":" + i + ":*");
                    assertThat(written).as("keys written for '%s'", name).contains(lockKey).hasSizeGreaterThanOrEqualTo(2);
                    int slot = cluster.keySlot(lockKey);
                    for (String key : written) {
                        assertThat(cluster.keySlot(key)).as("slot of key '%s' of lock '%s'", key, name).isEqualTo(slot);
                    }
                    assertThat(cluster.keySlot(RedisKeys.slotKey(lockKey, true)))
                            .as("slot of the slot record of '%s'", name).isEqualTo(slot);
                }
            }
        }
        // names without braces keep the keys they have on a single server
        assertThat(RedisKeys.lockKey(PREFIX, "report:nightly", true)).isEqualTo("latchkey:report:nightly");
        assertThat(RedisKeys.slotKey("latchkey:report:nightly", true)).isEqualTo("latchkey_slot:{latchkey:report:nightly}");
    }

    /** A semaphore's keys carry one hash tag, so its scripts run on a cluster whatever braces the name holds. */
    @Test
    void every_key_of_a_semaphore_lives_in_one_hash_slot_and_its_permits_work_on_the_cluster() throws Exception {
        String marker = unique("semaphore-slots");
        List<String> suffixes = List.of("plain", "a{b}", "}{");
        try (LockClient client = client(options()); LockClient other = client(options())) {
            for (int i = 0; i < suffixes.size(); i++) {
                String name = marker + ":" + i + ":" + suffixes.get(i);
                String tag = RedisKeys.semaphoreTag(PREFIX, name);
                try (io.latchkey.SemaphoreLease first = client.semaphore(name, 2).tryAcquire(TIMEOUT).orElseThrow();
                     io.latchkey.SemaphoreLease second = other.semaphore(name, 2).tryAcquire(TIMEOUT).orElseThrow()) {
                    assertThat(other.semaphore(name, 2).tryAcquire()).as("a third permit of two of '%s'", name).isEmpty();
                    List<String> written = keysMatching("*" + marker + ":" + i + ":*");
                    assertThat(written).as("keys written for '%s'", name).contains(RedisKeys.semaphoreKey(tag),
                            RedisKeys.permitKey(tag, first.slot()), RedisKeys.permitKey(tag, second.slot()),
                            RedisKeys.semaphoreTokenKey(tag));
                    int slot = cluster.keySlot(RedisKeys.semaphoreKey(tag));
                    for (String key : written) {
                        assertThat(cluster.keySlot(key)).as("slot of key '%s' of semaphore '%s'", key, name).isEqualTo(slot);
                    }
                    assertThat(cluster.keySlot(RedisKeys.semaphoreWakeChannel(tag))).as("slot of the wake channel")
                            .isEqualTo(slot);
                    // inspect reads the hash and every slot key in one script, which the cluster serves in their slot
                    assertThat(other.semaphore(name, 2).inspect().stream().map(s -> s.token().orElseThrow()).toList())
                            .as("the tokens inspect reads for '%s'", name)
                            .containsExactlyInAnyOrder(first.fencingToken(), second.fencingToken());
                }
                assertThat(keysMatching("*" + marker + ":" + i + ":*")).as("keys of '%s' after release", name)
                        .containsExactly(RedisKeys.semaphoreTokenKey(tag));
            }
        }
    }

    /** list finds the tagged keys of names with braces, on whichever primary serves them, beside the plain ones. */
    @Test
    void list_finds_held_names_with_and_without_braces_on_every_primary() throws Exception {
        String marker = unique("list");
        List<String> names = new ArrayList<>();
        for (String suffix : List.of("plain", "a{b}", "}{", "{}", "x", "y", "z")) {
            names.add(marker + ":" + suffix);
        }
        List<Lease> leases = new ArrayList<>();
        try (LockClient client = client(options())) {
            for (String name : names) {
                leases.add(client.lock(name).lock(TIMEOUT));
            }
            try (io.latchkey.SemaphoreLease permit = client.semaphore(marker + ":semaphore", 2).tryAcquire(TIMEOUT)
                    .orElseThrow()) {
                assertThat(client.list(marker + ":")).containsExactlyElementsOf(names.stream().sorted().toList());
            }
            leases.forEach(Lease::close);
            assertThat(client.list(marker + ":")).as("after the releases").isEmpty();
        }
    }

    @Test
    void a_grant_waits_for_the_replica_of_the_primary_that_serves_the_lock() throws Exception {
        String name = unique("wait");
        int primary = cluster.primaryOf(cluster.keySlot(RedisKeys.lockKey(PREFIX, name, true)));
        try (LockClient client = client(options())) {
            long before = waitCalls(primary);
            client.lock(name).lock(TIMEOUT).close();
            assertThat(waitCalls(primary)).as("WAIT commands on the lock's primary after one grant").isGreaterThan(before);
        }
    }

    /**
     * While the replica of the lock's primary does not answer, a grant is undone and refused with an
     * error that says why; with {@code checkLockSyncedSlaves=false} it is kept.
     */
    @Test
    void a_grant_no_replica_acknowledged_is_undone_unless_checkLockSyncedSlaves_is_false() throws Exception {
        String name = unique("unsynced");
        int primary = cluster.primaryOf(cluster.keySlot(RedisKeys.lockKey(PREFIX, name, true)));
        int replica = cluster.replicaOf(primary);
        LockOptions unchecked = options().toBuilder().backendOption(RedisConfigs.CHECK_SYNCED_REPLICAS, "false").build();
        try (LockClient checked = client(options()); LockClient accepting = client(unchecked)) {
            checked.lock(name).lock(TIMEOUT).close(); // both clients know the primary and its replica count
            accepting.lock(name).lock(TIMEOUT).close();
            // the replica stops answering for longer than the replica wait (1 s) and the acquire's bound
            Duration silence = TIMEOUT.multipliedBy(3);
            Thread sleeper = new Thread(() -> cluster.cli(replica, "DEBUG", "SLEEP", String.valueOf(silence.toSeconds())),
                    "test-replica-sleep");
            sleeper.start();
            try {
                Awaitility.await("the replica silent").atMost(silence).pollInterval(Duration.ofMillis(50))
                        .until(() -> !answersPing(replica));
                assertThatThrownBy(() -> checked.lock(name).tryLock())
                        .as("a grant while the replica is silent").isInstanceOf(LockBackendUnavailableException.class)
                        .hasMessageContaining("no replica acknowledged").hasMessageContaining("checkLockSyncedSlaves=false");
                // the grant is undone by a release sent as the acquire fails: it lands within one round trip
                Awaitility.await("the lock key gone after the refused grant").atMost(TIMEOUT)
                        .until(() -> cluster.cliFollowing("EXISTS", RedisKeys.lockKey(PREFIX, name, true)).equals("0"));
                try (Lease kept = accepting.lock(name).lock(TIMEOUT)) {
                    assertThat(kept.isValid()).as("a grant with checkLockSyncedSlaves=false while the replica is silent")
                            .isTrue();
                }
            } finally {
                sleeper.join();
            }
        }
    }

    @Test
    void an_application_cluster_client_serves_locks_that_exclude_those_of_a_uri_client_and_stays_open() throws Exception {
        Config config = new Config();
        var servers = config.useClusterServers();
        for (var a : cluster.endpoints()) {
            servers.addNodeAddress("redis://" + a.getHostString() + ":" + a.getPort());
        }
        RedissonClient redisson = Redisson.create(config);
        try {
            String name = unique("own");
            try (LockClient own = RedisLockProvider.client(redisson, options()); LockClient byUri = client(options())) {
                Lease lease = own.lock(name).lock(TIMEOUT);
                assertThat(byUri.lock(name).tryLock()).as("the URI client's tryLock while the own client holds it").isEmpty();
                long token = lease.fencingToken();
                lease.close();
                try (Lease next = byUri.lock(name).lock(TIMEOUT)) {
                    assertThat(next.fencingToken()).isGreaterThan(token);
                }
                String braces = unique("own") + ":a}b";
                own.lock(braces).lock(TIMEOUT).close(); // a name whose keys need their own hash tag
            }
            assertThat(redisson.isShutdown()).as("the application's client after the lock client closed").isFalse();
        } finally {
            redisson.shutdown();
        }
    }

    /**
     * A cluster client, like a single server's, fails a call whose connection closes before Redis
     * answered then, not at the timeout: its connect must not drop that hook for its own
     * ({@link RedisClosedChannels}). Without it a cluster client's look at the layout waited a whole
     * timeout on a restarting node, and its waiters were refused for seconds after a rolling restart.
     * Through a proxy in front of every node, as {@link RedisClusterContractTest} reaches them.
     */
    @Test
    void a_call_whose_connection_closes_before_the_answer_fails_at_once_not_at_the_timeout() throws Exception {
        Duration timeout = Duration.ofSeconds(10);
        List<TcpProxy> proxies = new ArrayList<>();
        StringJoiner natMap = new StringJoiner(",");
        List<java.net.InetSocketAddress> seeds = new ArrayList<>();
        for (java.net.InetSocketAddress node : cluster.endpoints()) {
            TcpProxy proxy = TcpProxy.start(node);
            proxies.add(proxy);
            seeds.add(proxy.endpoint());
            natMap.add(node.getHostString() + ":" + node.getPort() + "=" + proxy.endpoint().getHostString() + ":"
                    + proxy.endpoint().getPort());
        }
        LockOptions options = LockOptions.builder().lease(timeout.multipliedBy(3)).timeout(timeout)
                .backendOption(RedisConfigs.NAT_MAP, natMap.toString()).build();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (LockClient client = LockClient.connect(URI.create(cluster.uri(seeds)), options)) {
            client.lock("closed:warm-up").lock(Duration.ZERO).close();
            proxies.forEach(TcpProxy::cut); // the request below is written and waits for an answer that never comes
            Future<Optional<Lease>> call = pool.submit(() -> client.lock("closed").tryLock(Duration.ZERO));
            Thread.sleep(TIMEOUT.dividedBy(4).toMillis());
            long closedAt = System.nanoTime();
            proxies.forEach(TcpProxy::close);
            assertThatThrownBy(() -> call.get(timeout.toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(LockBackendUnavailableException.class)
                    .satisfies(e -> assertThat(e.getMessage()).contains("lock 'closed'")
                            .contains("connection was lost").doesNotContain("did not answer"));
            assertThat(Duration.ofNanos(System.nanoTime() - closedAt))
                    .as("from the close of the connections to the call's failure").isLessThan(timeout.dividedBy(2));
        } finally {
            pool.shutdownNow();
            proxies.forEach(TcpProxy::close);
        }
    }

    @Test
    void a_cluster_uri_lists_seed_nodes_with_their_default_port_takes_no_path_and_checks_its_options() throws Exception {
        String yaml = yaml("redis-cluster://h1,h2:7000?natMap=10.0.0.1:6379%3Dh1:6379");
        assertThat(yaml).contains("clusterServersConfig").contains("- redis://h1:6379").contains("- redis://h2:7000")
                .contains("readMode: \"MASTER\"").contains("natMapper: !<org.redisson.config.HostPortNatMapper>");
        assertThat(yaml("rediss-cluster://h1:7000")).contains("- rediss://h1:7000");
        assertThatThrownBy(() -> yaml("redis-cluster://h1:6379,h2:6379/1"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("database 0 only")
                .hasMessageContaining("redis-cluster://h1:6379,h2:6379");
        assertThatThrownBy(() -> yaml("redis-cluster://h1:6379?sslTruststore=ca.pem"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rediss-cluster://");
    }

    private static String yaml(String uri) throws Exception {
        LockUri.Parsed parsed = LockUri.parse(uri, LockOptions.defaults(), new RedisLockProvider());
        return RedisConfigs.build(parsed.uri(), parsed.options()).toYAML();
    }

    /**
     * A resharding moves the lock's slot to another primary while the lock is held and a contender
     * tries: the holder's lease stays valid throughout (its renewals follow ASK and then MOVED), no
     * contender is granted it, an acquire while the slot migrates is refused with an error that names
     * the resharding (the grant script names the lock's waiters set, which nobody has created, so the
     * migrating node answers TRYAGAIN even before a key moves), and after the move the lock passes on
     * with a higher token. A second lock of the same slot held by the same client, renewed with the first in one
     * script, stays valid too, also while the move has split their keys between the nodes (the script refused with
     * TRYAGAIN, each key then checked alone).
     */
    @Test
    void a_lock_whose_slot_moves_to_another_primary_while_held_keeps_its_holder_and_excludes_contenders() throws Exception {
        String name = unique("reshard");
        String lockKey = RedisKeys.lockKey(PREFIX, name, true);
        int slot = cluster.keySlot(lockKey);
        String siblingName = null;
        for (int i = 0; siblingName == null; i++) {
            if (slots.hashSlot(RedisKeys.lockKey(PREFIX, name + ":sibling:" + i, true)) == slot) {
                siblingName = name + ":sibling:" + i;
            }
        }
        int source = cluster.primaryOf(slot);
        int target = cluster.primaries().stream().filter(p -> p != source).findFirst().orElseThrow();
        String sourceId = cluster.nodeId(source);
        String targetId = cluster.nodeId(target);

        try (LockClient holderClient = client(options()); LockClient contender = client(options())) {
            Lease holder = holderClient.lock(name).lock(TIMEOUT);
            Lease sibling = holderClient.lock(siblingName).lock(TIMEOUT);
            long token = holder.fencingToken();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<String> invalidAt = new AtomicReference<>();
            AtomicReference<String> phase = new AtomicReference<>("held");
            Thread watcher = new Thread(() -> {
                while (!stop.get()) {
                    if (!holder.isValid() || !sibling.isValid()) {
                        invalidAt.compareAndSet(null, phase.get());
                    }
                    Thread.onSpinWait();
                }
            }, "test-validity-watcher");
            watcher.start();
            try {
                phase.set("migrating");
                assertOk(cluster.cli(target, "CLUSTER", "SETSLOT", String.valueOf(slot), "IMPORTING", sourceId));
                assertOk(cluster.cli(source, "CLUSTER", "SETSLOT", String.valueOf(slot), "MIGRATING", targetId));
                assertThatThrownBy(() -> contender.lock(name).tryLock())
                        .as("an acquire while the slot migrates and the lock's waiters set exists nowhere")
                        .isInstanceOf(LockBackendUnavailableException.class).hasMessageContaining("resharding");
                holdFor(LEASE, phase, "migrating: keys on the source");

                // the lock key moves first, its counter stays behind: the acquire script's keys are split
                phase.set("split");
                migrate(source, target, List.of(lockKey));
                assertThatThrownBy(() -> contender.lock(name).tryLock())
                        .as("an acquire while the lock key and its counter are on different nodes")
                        .isInstanceOf(LockBackendUnavailableException.class).hasMessageContaining("resharding");
                holdFor(LEASE, phase, "split: lock key on the target");

                phase.set("moved");
                List<String> rest = new ArrayList<>(Arrays.asList(
                        cluster.cli(source, "CLUSTER", "GETKEYSINSLOT", String.valueOf(slot), "1000").split("\n")));
                rest.removeIf(String::isBlank);
                migrate(source, target, rest);
                for (int p : List.of(target, source)) {
                    assertOk(cluster.cli(p, "CLUSTER", "SETSLOT", String.valueOf(slot), "NODE", targetId));
                }
                for (int p : cluster.primaries()) {
                    if (p != target && p != source) {
                        assertOk(cluster.cli(p, "CLUSTER", "SETSLOT", String.valueOf(slot), "NODE", targetId));
                    }
                }
                assertThat(cluster.primaryOf(slot)).isEqualTo(target);
                assertThat(contender.lock(name).tryLock()).as("a contender after the slot moved").isEmpty();
                holdFor(LEASE, phase, "moved: slot on the target");
            } finally {
                stop.set(true);
                watcher.join();
            }
            assertThat(invalidAt.get()).as("the phase in which a holder's lease was seen invalid").isNull();
            holder.close();
            sibling.close();
            Optional<Lease> next = contender.lock(name).tryLock(TIMEOUT);
            assertThat(next).as("the lock after the holder released it on the new primary").isPresent();
            assertThat(next.get().fencingToken()).as("the token of the next grant").isGreaterThan(token);
            next.get().close();
        }
    }

    /** Keeps the current phase for {@code time}, long enough for several renewals of the holder. */
    private static void holdFor(Duration time, AtomicReference<String> phase, String name) throws InterruptedException {
        phase.set(name);
        Thread.sleep(time.toMillis()); // the holder's renewals run meanwhile; the watcher observes its validity
    }

    /** Whether the node on {@code port} answers a PING within a tenth of the timeout. */
    private static boolean answersPing(int port) {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
            socket.setSoTimeout((int) TIMEOUT.toMillis() / 10);
            socket.getOutputStream().write("PING\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            return socket.getInputStream().read() == '+';
        } catch (java.io.IOException e) {
            return false;
        }
    }

    private static void migrate(int source, int target, List<String> keys) {
        if (keys.isEmpty()) {
            return;
        }
        List<String> args = new ArrayList<>(List.of("MIGRATE", "127.0.0.1", String.valueOf(target), "", "0", "5000",
                "KEYS"));
        args.addAll(keys);
        assertOk(cluster.cli(source, args.toArray(String[]::new)));
    }

    private static void assertOk(String reply) {
        assertThat(reply).as("the cluster's reply").isEqualTo("OK");
    }

    private static List<String> keysMatching(String pattern) {
        Set<String> keys = new HashSet<>();
        for (int p : cluster.primaries()) {
            for (String k : cluster.cli(p, "KEYS", pattern).split("\n")) {
                if (!k.isBlank()) {
                    keys.add(k);
                }
            }
        }
        return new ArrayList<>(keys);
    }

    private static long waitCalls(int port) {
        for (String line : cluster.cli(port, "INFO", "commandstats").split("\n")) {
            if (line.startsWith("cmdstat_wait:")) {
                String calls = line.substring(line.indexOf("calls=") + 6);
                return Long.parseLong(calls.substring(0, calls.indexOf(',')));
            }
        }
        return 0;
    }
}
