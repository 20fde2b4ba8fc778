package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.SemaphoreLease;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LockClients;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.kafka.KafkaServer;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.management.ObjectName;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.JmxReporter;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a lock costs this backend, counted with the clients' own request and metric counts: no admin
 * request for a name already seen, no state kept per released name, a hand-over in round trips.
 */
class KafkaCostTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(6)).build();
    private static final String PREFIX = KafkaLockProvider.DEFAULT_PREFIX;

    @RegisterExtension
    static final SharedServer<KafkaServer> KAFKA = SharedServer.of(KafkaLockTest.SERVER_KEY, KafkaServer::start);
    private static KafkaServer server;

    private final Deque<AutoCloseable> opened = new ArrayDeque<>();

    @BeforeAll
    static void start() {
        server = KAFKA.get();
    }

    @AfterEach
    void closeOpened() throws Exception {
        for (AutoCloseable c; (c = opened.pollFirst()) != null; ) {
            c.close();
        }
    }

    private static String name(String tag) {
        return "kafka-cost:" + tag + ":" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    }

    private KafkaLockBackend backend(LockOptions options, int topicCacheSize) {
        return backend(options, topicCacheSize, Map.of());
    }

    /** A backend with the Kafka settings {@code extra} on top of the broker's address. */
    private KafkaLockBackend backend(LockOptions options, int topicCacheSize, Map<String, Object> extra) {
        Map<String, Object> config = new HashMap<>(extra);
        config.put("bootstrap.servers", server.bootstrapServers());
        KafkaLockBackend backend = new KafkaLockBackend(config, options, PREFIX, 0, topicCacheSize);
        opened.addFirst(LockClients.of("kafka", backend, options));
        return backend;
    }

    private static void lockAndRelease(LockClient client, String name) throws InterruptedException {
        try (Lease lease = client.lock(name).tryLock(OPTIONS.lease()).orElseThrow(
                () -> new AssertionError("lock '" + name + "' was not granted"))) {
            lease.ensureValid();
        }
    }

    /** The requests a client sent, as its network layer counts them (group {@code <client>-metrics}). */
    private static double requestsSent(Map<MetricName, ? extends Metric> metrics, String group) {
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
            if (e.getKey().name().equals("request-total") && e.getKey().group().equals(group)) {
                return ((Number) e.getValue().metricValue()).doubleValue();
            }
        }
        throw new AssertionError("no metric " + group + "/request-total");
    }

    /** The JMX MBeans registered for the consumers of lock {@code name}'s members, by their client ids. */
    private static Set<ObjectName> consumerMBeans(String name) throws Exception {
        String members = "latchkey-" + TopicNames.topic(PREFIX, name) + "-";
        return ManagementFactory.getPlatformMBeanServer().queryNames(new ObjectName("kafka.consumer:*"), null).stream()
                .filter(o -> String.valueOf(o.getKeyProperty("client-id")).startsWith(members)).collect(Collectors.toSet());
    }

    @Test
    @DisplayName("a member's consumer registers no JMX MBean and pushes no client metrics to the broker, unless the application's settings ask")
    void membersReportNoMetricsUnlessTheSettingsAsk() throws Exception {
        String name = name("mbeans");
        KafkaLockBackend quiet = backend(OPTIONS, KafkaLockBackend.TOPIC_CACHE_SIZE);
        try (Lease lease = LockClients.of("kafka", quiet, OPTIONS).lock(name).tryLock(OPTIONS.lease()).orElseThrow()) {
            assertThat(consumerMBeans(name)).as("MBeans of the holder's consumer, default settings").isEmpty();
        }
        assertThat(quiet.consumerConfig("g", "c", 0, 0)).as("a member's consumer settings, by default")
                .containsEntry("enable.metrics.push", false);

        KafkaLockBackend reporting = backend(OPTIONS, KafkaLockBackend.TOPIC_CACHE_SIZE,
                Map.of("metric.reporters", JmxReporter.class.getName(), "enable.metrics.push", true));
        try (Lease lease = LockClients.of("kafka", reporting, OPTIONS).lock(name).tryLock(OPTIONS.lease()).orElseThrow()) {
            assertThat(consumerMBeans(name)).as("MBeans of the holder's consumer, metric.reporters=JmxReporter")
                    .isNotEmpty();
        }
        assertThat(reporting.consumerConfig("g", "c", 0, 0)).as("a member's consumer settings, enable.metrics.push=true")
                .containsEntry("enable.metrics.push", true);
    }

    @Test
    @DisplayName("a client's held locks are polled by one thread of its own: per held lock, only the consumer's heartbeat"
            + " thread runs, and every lease stays valid past the lease")
    void heldLocksShareOnePollingThread() throws Exception {
        KafkaLockBackend backend = backend(OPTIONS, KafkaLockBackend.TOPIC_CACHE_SIZE);
        LockClient client = LockClients.of("kafka", backend, OPTIONS);
        int count = 6;
        List<Lease> leases = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                leases.add(client.lock(name("held-" + i)).tryLock(OPTIONS.lease()).orElseThrow());
            }
            awaitHandedOver(leases);
            String held = backend.heldPolls().threadName();
            assertThat(liveThreads().filter(held::equals).count()).as("the client's threads polling its holders").isEqualTo(1);
            // polled from that one thread, the holders' heartbeats keep confirming them
            Thread.sleep(OPTIONS.lease().plusSeconds(1).toMillis()); // the span observed; nothing is awaited
            for (Lease lease : leases) {
                assertThat(lease.isValid()).as("%s, held past its lease", lease.lockName()).isTrue();
            }
        } finally {
            leases.forEach(Lease::close);
        }
        for (Lease lease : leases) {
            assertThat(threadsOf(lease.lockName())).as("threads of released lock '%s''s group", lease.lockName()).isEmpty();
        }
        // with nothing held, the polling thread ends
        String held = backend.heldPolls().threadName();
        Awaitility.await().atMost(OPTIONS.timeout()).until(() -> liveThreads().noneMatch(held::equals));
    }

    @Test
    @DisplayName("a loss signal that releases another lock of the client, run on the thread that polls the holders,"
            + " leaves that lock's group before the release returns")
    void releaseFromALossSignalLeavesTheGroup() throws Exception {
        KafkaLockBackend backend = backend(OPTIONS, KafkaLockBackend.TOPIC_CACHE_SIZE);
        LockClient client = LockClients.of("kafka", backend, OPTIONS);
        Lease lost = client.lock(name("lost")).tryLock(OPTIONS.lease()).orElseThrow();
        Lease other = client.lock(name("other")).tryLock(OPTIONS.lease()).orElseThrow();
        try {
            awaitHandedOver(List.of(lost, other));
            java.util.concurrent.CompletableFuture<String> releasedOn = new java.util.concurrent.CompletableFuture<>();
            lost.lost().thenRun(() -> {
                other.close();
                releasedOn.complete(Thread.currentThread().getName());
            });
            client.lock(lost.lockName()).forceRelease();
            assertThat(releasedOn.get(OPTIONS.lease().toMillis(), TimeUnit.MILLISECONDS)).as("where the loss was signalled")
                    .isEqualTo(backend.heldPolls().threadName());
            assertThat(threadsOf(other.lockName())).as("threads of the lock released there").isEmpty();
            assertThat(backend.members()).as("the client's members").extracting(GroupMember::lockName)
                    .doesNotContain(other.lockName());
        } finally {
            lost.close();
            other.close();
        }
    }

    @Test
    @DisplayName("a semaphore's acquire keeps one member: the members of the other slots leave, those granted their slot"
            + " and handed over to the holders' thread too")
    void permitRaceLeavesTheSlotsItDoesNotKeep() throws Exception {
        KafkaLockBackend backend = backend(OPTIONS, KafkaLockBackend.TOPIC_CACHE_SIZE);
        LockClient client = LockClients.of("kafka", backend, OPTIONS);
        String name = name("race");
        int permits = 3;
        String topic = TopicNames.semaphoreTopic(PREFIX, name);
        // every slot is free: each slot's member is granted its slot, and the acquire keeps the first
        try (SemaphoreLease permit = client.semaphore(name, permits).tryAcquire(OPTIONS.lease()).orElseThrow()) {
            Awaitility.await().atMost(OPTIONS.timeout().multipliedBy(2)).pollInterval(Duration.ofMillis(20))
                    .untilAsserted(() -> {
                        for (int slot = 0; slot < permits; slot++) {
                            String group = TopicNames.slotGroup(topic, slot);
                            List<String> threads = liveThreads().filter(t -> t.contains(group)).toList();
                            if (slot == permit.slot()) {
                                assertThat(threads).as("threads of the kept slot %d", slot).singleElement().asString()
                                        .startsWith("kafka-coordinator-heartbeat-thread");
                            } else {
                                assertThat(threads).as("threads of slot %d, not kept", slot).isEmpty();
                            }
                        }
                        assertThat(backend.members()).as("the client's members").hasSize(1);
                    });
            assertThat(permit.isValid()).isTrue();
        }
    }

    @Test
    @DisplayName("a member handed over to the holders' thread that leaves without a release, as a semaphore's acquire"
            + " lets go of a slot it does not keep, closes its consumer")
    void handedOverMemberThatLeavesIsClosed() throws Exception {
        KafkaLockBackend backend = backend(OPTIONS, KafkaLockBackend.TOPIC_CACHE_SIZE);
        LockClient client = LockClients.of("kafka", backend, OPTIONS);
        Lease lease = client.lock(name("leaves")).tryLock(OPTIONS.lease()).orElseThrow();
        try {
            awaitHandedOver(List.of(lease));
            GroupMember member = backend.members().stream().filter(m -> m.lockName().equals(lease.lockName()))
                    .findFirst().orElseThrow();
            assertThat(member.leave()).as("the member's first leave").isTrue();
            member.awaitLeft(); // throws if the member did not end within its bound
            assertThat(threadsOf(lease.lockName())).as("threads of its group once it left").isEmpty();
            assertThat(backend.members()).as("the client's members").doesNotContain(member);
        } finally {
            lease.close();
        }
    }

    /** Waits until the member of each lease has handed its consumer over: a member's own thread ends then. */
    private static void awaitHandedOver(List<Lease> leases) {
        Awaitility.await().atMost(OPTIONS.timeout()).pollInterval(Duration.ofMillis(20)).untilAsserted(() -> {
            for (Lease lease : leases) {
                assertThat(threadsOf(lease.lockName())).as("threads of lock '%s''s group", lease.lockName())
                        .singleElement().asString().startsWith("kafka-coordinator-heartbeat-thread");
            }
        });
    }

    private static java.util.stream.Stream<String> liveThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName);
    }

    /** The live threads named after lock {@code name}'s consumer group: a member's own, the consumer's heartbeat thread. */
    private static List<String> threadsOf(String name) {
        String group = TopicNames.topic(PREFIX, name);
        return liveThreads().filter(t -> t.endsWith(" | " + group) || t.startsWith("latchkey-kafka-" + group + "-")).toList();
    }

    @Test
    @DisplayName("a lock name already seen costs no admin request and no producer request but its fencing marker")
    void knownNameCostsNoAdminRequest() throws Exception {
        KafkaLockBackend backend = backend(OPTIONS, KafkaLockBackend.TOPIC_CACHE_SIZE);
        LockClient client = LockClients.of("kafka", backend, OPTIONS);
        String name = name("known");
        double atConnect = requestsSent(backend.adminMetrics(), "admin-client-metrics");

        lockAndRelease(client, name);
        double afterFirst = requestsSent(backend.adminMetrics(), "admin-client-metrics");
        double producedAfterFirst = requestsSent(backend.producerMetrics(), "producer-metrics");
        int again = 5;
        for (int i = 0; i < again; i++) {
            lockAndRelease(client, name);
        }

        assertThat(afterFirst).as("admin requests of the first acquire (topic lookup and creation)").isGreaterThan(atConnect);
        assertThat(requestsSent(backend.adminMetrics(), "admin-client-metrics"))
                .as("admin requests of %d more acquires of the same name", again).isEqualTo(afterFirst);
        assertThat(requestsSent(backend.producerMetrics(), "producer-metrics") - producedAfterFirst)
                .as("producer requests of %d more acquires: one fencing marker each, no metadata lookup", again)
                .isEqualTo(again);
    }

    @Test
    @DisplayName("a semaphore name already seen costs no admin request and no producer request but its fencing marker")
    void knownSemaphoreCostsNoAdminRequest() throws Exception {
        KafkaLockBackend backend = backend(OPTIONS, KafkaLockBackend.TOPIC_CACHE_SIZE);
        LockClient client = LockClients.of("kafka", backend, OPTIONS);
        String name = name("known-semaphore");
        acquireAndRelease(client, name);
        double afterFirst = requestsSent(backend.adminMetrics(), "admin-client-metrics");
        double producedAfterFirst = requestsSent(backend.producerMetrics(), "producer-metrics");
        int again = 5;
        for (int i = 0; i < again; i++) {
            acquireAndRelease(client, name);
        }

        assertThat(requestsSent(backend.adminMetrics(), "admin-client-metrics"))
                .as("admin requests of %d more permits of the same semaphore", again).isEqualTo(afterFirst);
        assertThat(requestsSent(backend.producerMetrics(), "producer-metrics") - producedAfterFirst)
                .as("producer requests of %d more permits: one fencing marker each", again).isEqualTo(again);
    }

    private static void acquireAndRelease(LockClient client, String name) throws InterruptedException {
        try (SemaphoreLease lease = client.semaphore(name, 3).tryAcquire(OPTIONS.lease()).orElseThrow(
                () -> new AssertionError("no permit of semaphore '" + name + "' was granted"))) {
            lease.ensureValid();
        }
    }

    @Test
    @DisplayName("a try that finds a known name held, and the acquires after it, cost no admin request")
    void contendedKnownNameCostsNoAdminRequest() throws Exception {
        KafkaLockBackend backend = backend(OPTIONS, KafkaLockBackend.TOPIC_CACHE_SIZE);
        LockClient client = LockClients.of("kafka", backend, OPTIONS);
        LockClient other = LockClients.of("kafka", backend(OPTIONS, KafkaLockBackend.TOPIC_CACHE_SIZE), OPTIONS);
        String name = name("contended");
        lockAndRelease(client, name);
        double before = requestsSent(backend.adminMetrics(), "admin-client-metrics");

        try (Lease held = other.lock(name).tryLock(OPTIONS.lease()).orElseThrow()) {
            assertThat(client.lock(name).tryLock()).as("a try while another client holds the lock").isEmpty();
        }
        lockAndRelease(client, name);

        assertThat(requestsSent(backend.adminMetrics(), "admin-client-metrics"))
                .as("admin requests of a failed try and an acquire of a known name").isEqualTo(before);
    }

    @Test
    @DisplayName("200 names locked and released leave no state per name: the clients' metrics and the topic cache stay bounded")
    void releasedNamesLeaveNoStatePerName() throws Exception {
        int cacheSize = 16;
        KafkaLockBackend backend = backend(OPTIONS, cacheSize);
        LockClient client = LockClients.of("kafka", backend, OPTIONS);
        for (int i = 0; i < 20; i++) {
            lockAndRelease(client, name("many-" + i));
        }
        int producerMetrics = backend.producerMetrics().size();
        int adminMetrics = backend.adminMetrics().size();

        for (int i = 20; i < 200; i++) {
            lockAndRelease(client, name("many-" + i));
        }

        assertThat(backend.producerMetrics().size()).as("the producer's metrics after 200 names (after 20: %d)",
                producerMetrics).isEqualTo(producerMetrics);
        assertThat(backend.adminMetrics().size()).as("the admin client's metrics after 200 names (after 20: %d)",
                adminMetrics).isEqualTo(adminMetrics);
        assertThat(backend.knownTopics()).as("lock topics kept known").isEqualTo(cacheSize);
        assertThat(backend.members()).as("members left after release").isEmpty();
    }

    @Test
    @DisplayName("with handover=rejoin a waiter takes over a released lock in round trips, not at its next heartbeat: 4 hand-overs under a quarter heartbeat")
    void handOverDoesNotWaitForAHeartbeat() throws Exception {
        Duration heartbeat = Duration.ofSeconds(5);
        LockOptions options = LockOptions.builder().lease(heartbeat.multipliedBy(3))
                .backendOption(KafkaLockProvider.HANDOVER, "rejoin")
                .backendOption(KafkaLockProvider.HEARTBEAT, Durations.format(heartbeat)).build();
        // A waiter that learnt of the release at its next heartbeat would take about one heartbeat
        // interval here, as the release follows at once the rebalance that admitted it (which restarts
        // its heartbeat timer); a quarter of one leaves the round trips plenty of room.
        Duration bound = heartbeat.dividedBy(4);
        KafkaLockBackend[] backends = {backend(options, 16), backend(options, 16)};
        LockClient[] clients = {LockClients.of("kafka", backends[0], options), LockClients.of("kafka", backends[1], options)};
        String name = name("handover");
        ExecutorService pool = Executors.newSingleThreadExecutor();
        opened.addFirst(pool::shutdownNow);
        Lease held = clients[0].lock(name).tryLock(options.lease()).orElseThrow();

        for (int round = 0; round < 4; round++) {
            KafkaLockBackend holderBackend = backends[round % 2];
            LockClient waiter = clients[(round + 1) % 2];
            GroupMember holder = holderBackend.members().stream().filter(GroupMember::holding).findFirst().orElseThrow();
            int generation = holder.generation();
            Future<Optional<Lease>> next = pool.submit(() -> waiter.lock(name).tryLock(options.lease().multipliedBy(2)));
            Awaitility.await("the waiter admitted to the group by a rebalance").atMost(options.lease())
                    .pollInterval(Duration.ofMillis(5)).until(() -> holder.generation() > generation);

            long releasedAt = System.nanoTime();
            held.close();
            Optional<Lease> got = next.get(options.lease().multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS);
            Duration took = Duration.ofNanos(System.nanoTime() - releasedAt);

            assertThat(got).as("round %d: the waiter's lease", round).isPresent();
            held = got.get();
            assertThat(took).as("round %d: hand-over with a heartbeat interval of %s", round, heartbeat)
                    .isLessThan(bound);
        }
        held.close();
    }
}
