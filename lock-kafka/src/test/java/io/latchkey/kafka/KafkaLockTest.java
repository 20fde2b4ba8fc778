package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockLostException;
import io.latchkey.LockOptions;
import io.latchkey.spi.LockClients;
import io.latchkey.testkit.CrashFailover;
import io.latchkey.testkit.fault.OptionsUri;
import io.latchkey.testkit.kafka.KafkaServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The traps of a lock on a consumer group, each shown not to catch this backend, on one real broker. */
class KafkaLockTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(6)).build();
    private static final String PREFIX = KafkaLockProvider.DEFAULT_PREFIX;
    /** The key under which this module's tests share one broker. */
    static final String SERVER_KEY = "kafka";

    @RegisterExtension
    static final KafkaBroker BROKER = new KafkaBroker();

    private static KafkaServer server() {
        return BROKER.server();
    }

    private static Admin admin() {
        return BROKER.admin();
    }

    private static String name(String tag) {
        return "kafka-test:" + tag + ":" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    }

    private LockClient client(Properties extra) {
        return BROKER.client(OPTIONS, extra);
    }

    private LockClient client() {
        return client(new Properties());
    }

    /** A client whose backend the test can look into. */
    private KafkaLockBackend backend() {
        Map<String, Object> config = new HashMap<>();
        config.put("bootstrap.servers", server().bootstrapServers());
        KafkaLockBackend backend = new KafkaLockBackend(config, OPTIONS, PREFIX, 0);
        BROKER.track(LockClients.of("kafka", backend, OPTIONS));
        return backend;
    }

    private static LockClient clientOf(KafkaLockBackend backend) {
        return LockClients.of("kafka", backend, OPTIONS);
    }

    private Lease hold(LockClient client, String name) throws InterruptedException {
        return BROKER.track(client.lock(name).tryLock(OPTIONS.lease().multipliedBy(3))
                .orElseThrow(() -> new AssertionError("lock '" + name + "' was not granted")));
    }

    private static GroupMember holderOf(KafkaLockBackend backend) {
        return backend.members().stream().filter(GroupMember::holding).findFirst()
                .orElseThrow(() -> new AssertionError("no member of this backend holds a lock"));
    }

    private static Duration heartbeatInterval() {
        return OPTIONS.lease().dividedBy(6);
    }

    private static Duration slack() {
        Duration half = OPTIONS.timeout().dividedBy(2);
        return OPTIONS.safetyMargin().compareTo(half) > 0 ? OPTIONS.safetyMargin() : half;
    }

    @Test
    @DisplayName("a joining member never takes a held lock: 20 rounds of a new member joining the holder's group")
    void joinerNeverTakesHeldLock() throws Exception {
        String name = name("joiner");
        Lease lease = hold(client(), name);
        LockClient joiner = client();

        for (int round = 1; round <= 20; round++) {
            Optional<Lease> got = joiner.lock(name).tryLock(Duration.ZERO);
            got.ifPresent(Lease::close);

            assertThat(got).as("round %d: the joiner's grant", round).isEmpty();
            assertThat(lease.isValid()).as("round %d: the holder's lease", round).isTrue();
        }
        assertThat(lease.lost().toCompletableFuture()).isNotDone();
    }

    @Test
    @DisplayName("a holder keeps the lock across a hold three times longer than max.poll.interval.ms")
    void holderOutlivesMaxPollInterval() throws Exception {
        Duration maxPoll = Duration.ofSeconds(4);
        Properties p = new Properties();
        p.put("max.poll.interval.ms", Long.toString(maxPoll.toMillis()));
        p.put("heartbeat.interval.ms", Long.toString(maxPoll.toMillis() / 8));
        String name = name("long-hold");
        Lease lease = hold(client(p), name);
        long end = System.nanoTime() + maxPoll.multipliedBy(3).toNanos();

        // the business code runs on this thread and never calls the client; only the lease is looked at
        while (System.nanoTime() - end < 0) {
            assertThat(lease.isValid()).as("the lease, %d ms before the end of the hold",
                    TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())).isTrue();
            Thread.sleep(100);
        }

        assertThat(lease.lost().toCompletableFuture()).isNotDone();
        assertThat(client().lock(name).tryLock()).as("another client's try after the long hold").isEmpty();
        lease.ensureValid();
    }

    @Test
    @DisplayName("five waiters waiting 20 s never take the lock, and rebalance the group at most once per heartbeat interval")
    void waitersRebalanceAtMostOncePerHeartbeat() throws Exception {
        String name = name("waiters");
        String group = TopicNames.topic(PREFIX, name);
        KafkaLockBackend holderBackend = backend();
        hold(clientOf(holderBackend), name);
        GroupMember holder = holderOf(holderBackend);
        int before = holder.generation();
        Duration wait = Duration.ofSeconds(20);
        ExecutorService pool = Executors.newFixedThreadPool(5);
        BROKER.track(pool::shutdownNow);
        List<Future<Optional<Lease>>> waiters = new ArrayList<>();
        long started = System.nanoTime();
        for (int i = 0; i < 5; i++) {
            LockClient waiter = client();
            waiters.add(pool.submit(() -> waiter.lock(name).tryLock(wait)));
        }

        Awaitility.await("five waiters and the holder in the group").atMost(wait.dividedBy(2))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> admin().describeConsumerGroups(List.of(group)).all().get().get(group).members().size() == 6);
        // Parked waiters (see GroupMember#afterRebalanceWithoutGrant) start a rebalance that the holder
        // completes at its next heartbeat: one per heartbeat interval at most, and the holder keeps the lock.
        long quietUntil = started + wait.minus(Duration.ofMillis(500)).toNanos();
        while (System.nanoTime() - quietUntil < 0) {
            assertThat(holder.holding()).as("the holder while five members wait").isTrue();
            Thread.sleep(200);
        }
        int rebalances = holder.generation() - before;
        long heartbeats = (System.nanoTime() - started) / heartbeatInterval().toNanos();

        assertThat(rebalances).as("rebalances in %d heartbeat intervals with five members joining and waiting", heartbeats)
                .isBetween(1, (int) heartbeats + 1 + 5);
        for (Future<Optional<Lease>> w : waiters) {
            assertThat(w.get(wait.plus(OPTIONS.timeout()).toMillis(), TimeUnit.MILLISECONDS)).isEmpty();
        }
        assertThat(holder.holding()).isTrue();
    }

    @Test
    @DisplayName("the fencing token increases across a deletion of the consumer group, whose generation restarts")
    void tokenIncreasesAcrossGroupDeletion() throws Exception {
        String name = name("deleted-group");
        String group = TopicNames.topic(PREFIX, name);
        KafkaLockBackend backend = backend();
        LockClient client = clientOf(backend);
        long lastToken = -1;
        int lastGeneration = -1;
        for (int i = 0; i < 3; i++) {
            try (Lease lease = client.lock(name).tryLock(OPTIONS.lease()).orElseThrow()) {
                assertThat(lease.fencingToken()).isGreaterThan(lastToken);
                lastToken = lease.fencingToken();
                lastGeneration = holderOf(backend).generation();
            }
        }

        Awaitility.await("the empty group to be deleted").atMost(OPTIONS.lease())
                .pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .until(() -> admin().deleteConsumerGroups(List.of(group)).all().get(5, TimeUnit.SECONDS) == null);
        try (Lease lease = client.lock(name).tryLock(OPTIONS.lease()).orElseThrow()) {
            int generation = holderOf(backend).generation();

            assertThat(generation).as("the generation after the group was deleted (before: %d)", lastGeneration)
                    .isLessThan(lastGeneration);
            assertThat(lease.fencingToken()).as("the token after the group was deleted").isGreaterThan(lastToken);
        }
    }

    @Test
    @DisplayName("an existing topic with several partitions under a lock's name is refused, naming the topic and its partitions")
    void multiPartitionTopicIsRefused() throws Exception {
        String name = name("multi");
        String topic = TopicNames.topic(PREFIX, name);
        admin().createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
        LockClient client = client();

        assertThatThrownBy(() -> client.lock(name).tryLock(Duration.ofSeconds(1)))
                .isInstanceOf(LockException.class)
                .hasMessageContaining(topic)
                .hasMessageContaining("3 partitions")
                .hasMessageContaining(name);
    }

    @Test
    @DisplayName("a lease whose session is below the broker's group.min.session.timeout.ms is refused at connect, naming the setting and its value")
    void leaseBelowBrokerMinimumIsRefusedAtConnect() {
        Properties p = new Properties();
        p.put("bootstrap.servers", server().bootstrapServers());
        // the test broker's minimum is 1 s; a lease of 1 s gives a session of 1 s minus one heartbeat
        LockOptions tooShort = LockOptions.builder().lease(Duration.ofSeconds(1)).timeout(Duration.ofMillis(500)).build();

        assertThatThrownBy(() -> KafkaLockProvider.newClient(p, tooShort).close())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease 1s is too short")
                .hasMessageContaining("group.min.session.timeout.ms=1000")
                .hasMessageContaining(server().bootstrapServers());
    }

    @Test
    @DisplayName("a lease whose session is above the broker's group.max.session.timeout.ms is refused at connect, naming the setting and its value")
    void leaseAboveBrokerMaximumIsRefusedAtConnect() {
        Properties p = new Properties();
        p.put("bootstrap.servers", server().bootstrapServers());
        LockOptions tooLong = LockOptions.builder().lease(Duration.ofMinutes(31)).build(); // the broker's default maximum is 30 min

        assertThatThrownBy(() -> KafkaLockProvider.newClient(p, tooLong).close())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease 31m is too long")
                .hasMessageContaining("group.max.session.timeout.ms=1800000");
    }

    @Test
    @DisplayName("newClient(properties, options) honours lease, timeout and namespace: the session, the topic prefix")
    void propertiesFactoryHonoursSharedOptions() throws Exception {
        LockOptions options = OPTIONS.toBuilder().lease(Duration.ofSeconds(7)).timeout(Duration.ofSeconds(3))
                .namespace("ns-test.").build();
        Properties p = new Properties();
        p.put("bootstrap.servers", server().bootstrapServers());
        String name = name("namespace");
        try (LockClient client = KafkaLockProvider.newClient(p, options);
                Lease lease = client.lock(name).tryLock(Duration.ofSeconds(10)).orElseThrow()) {
            String topic = TopicNames.topic("ns-test.", name);
            assertThat(admin().listTopics().names().get(30, TimeUnit.SECONDS)).contains(topic);
            ConsumerGroupDescription group = admin().describeConsumerGroups(List.of(topic)).all().get(30, TimeUnit.SECONDS).get(topic);
            assertThat(group.members()).hasSize(1);
            assertThat(lease.remaining()).as("validity within lease - safetyMargin")
                    .isLessThanOrEqualTo(options.lease().minus(options.safetyMargin()));
        }
    }

    @Test
    @DisplayName("a holder that closes leaves the group at once: a waiter takes over within about one heartbeat interval")
    void closeHandsOverWithinAHeartbeat() throws Exception {
        String name = name("handoff");
        Lease held = hold(client(), name);
        LockClient waiter = client();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        BROKER.track(pool::shutdownNow);
        Future<Optional<Lease>> next = pool.submit(() -> waiter.lock(name).tryLock(OPTIONS.lease().multipliedBy(3)));
        String group = TopicNames.topic(PREFIX, name);
        Awaitility.await("the waiter in the group").atMost(OPTIONS.lease()).pollInterval(Duration.ofMillis(100))
                .until(() -> admin().describeConsumerGroups(List.of(group)).all().get().get(group).members().size() == 2);

        long closedAt = System.nanoTime();
        held.close();
        Optional<Lease> got = next.get(OPTIONS.lease().multipliedBy(4).toMillis(), TimeUnit.MILLISECONDS);
        Duration took = Duration.ofNanos(System.nanoTime() - closedAt);

        assertThat(got).isPresent();
        BROKER.track(got.get());
        assertThat(took).as("handover after close; the session (%s) must not be waited out", OPTIONS.lease())
                .isLessThanOrEqualTo(heartbeatInterval().plus(slack()));
    }

    @Test
    @DisplayName("a slot record from a holder whose grant was followed by another is ignored, and its writer is told it lost the lock")
    void staleSlotRecordIsIgnored() throws Exception {
        KafkaLockBackend backend = backend();
        LockClient client = clientOf(backend);
        BROKER.track(client);
        String name = name("stale-slot");
        String topic = TopicNames.topic(PREFIX, name);
        TopicPartition partition = new TopicPartition(topic, 0);
        Instant midnight = Instant.parse("2030-01-01T00:00:00Z");

        Lease first = hold(client, name);
        holderOf(backend).recordCompletedSlot(midnight);
        long firstAnchor = holderOf(backend).slotAnchor();
        first.close();
        Lease second = hold(client, name);
        GroupMember holder = holderOf(backend);
        assertThat(holder.lastCompletedSlot()).as("the first holder's record, written while it held the lock").contains(midnight);

        // the first holder wakes from a pause and records a later slot after its old marker
        Instant nextNight = midnight.plus(Duration.ofDays(1));
        assertThatThrownBy(() -> SlotRecords.record(backend, name, partition, firstAnchor, nextNight))
                .isInstanceOf(LockLostException.class).hasMessageContaining(name).hasMessageContaining(topic);
        assertThat(holder.lastCompletedSlot()).as("the stale record is ignored").contains(midnight);

        holder.recordCompletedSlot(nextNight);
        assertThat(holder.lastCompletedSlot()).as("the holder's own record counts").contains(nextNight);
        assertThat(second.isValid()).isTrue();
    }

    @Test
    @Tag("zero-wait")
    @DisplayName("with the default options and a zero wait a lone member is granted a free lock, and of two members"
            + " starting together exactly one, within the timeout")
    void zeroWaitOnAFreeLock() throws Exception {
        LockOptions defaults = LockOptions.builder().build();
        Properties p = new Properties();
        p.put("bootstrap.servers", server().bootstrapServers());
        for (int i = 0; i < 3; i++) {
            LockClient lone = BROKER.track(KafkaLockProvider.newClient(p, defaults));
            assertThat(lone.lock(name("zero-wait-lone")).tryLock(Duration.ZERO)).as("a lone tryLock(0), round %d", i)
                    .map(BROKER::track).isPresent();
        }
        String name = name("zero-wait-two");
        LockClient a = BROKER.track(KafkaLockProvider.newClient(p, defaults));
        LockClient b = BROKER.track(KafkaLockProvider.newClient(p, defaults));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        BROKER.track(pool::shutdownNow);
        java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
        List<Future<Optional<Lease>>> tries = new ArrayList<>();
        for (LockClient c : List.of(a, b)) {
            tries.add(pool.submit(() -> {
                start.await();
                return c.lock(name).tryLock(Duration.ZERO).map(BROKER::track);
            }));
        }
        start.countDown();
        int granted = 0;
        for (Future<Optional<Lease>> f : tries) {
            granted += f.get(defaults.timeout().plus(slack()).toMillis(), TimeUnit.MILLISECONDS).isPresent() ? 1 : 0;
        }
        assertThat(granted).as("members of two clients granted the free lock with a zero wait at once").isEqualTo(1);
    }

    @Test
    @DisplayName("a killed holder's lock is free within lease plus the waiter's wake-up (250 ms), at the default"
            + " heartbeat")
    void killedHoldersLockIsFreeWithinLeasePlusWakeUp() throws Exception {
        String uri = OptionsUri.of(server().uri(server().endpoints()), OPTIONS);
        CrashFailover.lock(uri, client(), name("crash"), OPTIONS.lease(), 2);
    }

    @Test
    @DisplayName("read-write locks are refused at readWriteLock(), naming the backend and why; the client keeps working")
    void readWriteLocksRefusedWithTheReason() throws Exception {
        LockClient client = client();
        String name = name("rw");
        assertThatThrownBy(() -> client.readWriteLock(name)).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("kafka backend offers no read-write locks")
                .hasMessageContaining("'" + name + "'")
                .hasMessageContaining("every reader holding must rejoin")
                .hasMessageContaining("use a lock for exclusive access, or another backend");
        try (Lease lease = client.lock(name).lock(Duration.ofSeconds(30))) {
            assertThat(lease.isValid()).isTrue();
        }
    }
}
