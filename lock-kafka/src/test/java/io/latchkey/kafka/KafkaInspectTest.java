package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.GrantTime;
import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.LockState;
import io.latchkey.spi.Durations;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.kafka.KafkaServer;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code inspect()} on Kafka: who holds a lock, read from the lock's group and the metadata of the commit
 * that confirmed the grant, by a client that does not contend; nothing created for a name nobody used.
 */
class KafkaInspectTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(6)).build();
    /** The members' session, as the backend sets it: the lease minus the default heartbeat (a sixth of it). */
    private static final Duration SESSION = OPTIONS.lease().minus(OPTIONS.lease().dividedBy(6));
    private static final String PREFIX = KafkaLockProvider.DEFAULT_PREFIX;

    @RegisterExtension
    static final KafkaBroker BROKER = new KafkaBroker();

    private static KafkaServer server() {
        return BROKER.server();
    }

    private static Admin admin() {
        return BROKER.admin();
    }

    private static String name(String tag) {
        return "kafka-inspect:" + tag + ":" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    }

    private LockClient client(LockOptions options) {
        return BROKER.client(options, new Properties());
    }

    private static OffsetAndMetadata committed(String group) throws Exception {
        return admin().listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS)
                .get(new TopicPartition(group, 0));
    }

    @Test
    @DisplayName("a name nobody used reads as free, and the read creates no topic and no group, not even the token topic")
    void freeNameCreatesNothing() throws Exception {
        String prefix = "inspect-" + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".";
        LockClient client = client(OPTIONS.toBuilder().namespace(prefix).build());
        String name = name("free");
        String group = TopicNames.topic(prefix, name);

        assertThat(client.lock(name).inspect().isHeld()).as("a lock nobody ever took").isFalse();
        assertThat(client.election(name).leader()).as("the leader of an election nobody campaigned in").isEmpty();

        assertThat(admin().listTopics().names().get(30, TimeUnit.SECONDS)).as("topics after the reads")
                .noneMatch(t -> t.startsWith(prefix));
        assertThat(admin().listGroups().all().get(30, TimeUnit.SECONDS)).extracting(GroupListing::groupId)
                .as("groups after the reads").doesNotContain(group);
    }

    @Test
    @DisplayName("a holder's owner, client start, thread, token and session read by another client; the commit's raw"
            + " metadata holds the holder text and the member id; free after release, the commit left behind")
    void holderReadBackUntilRelease() throws Exception {
        String name = name("held");
        String group = TopicNames.topic(PREFIX, name);
        LockClient observer = client(OPTIONS);
        Instant before = Instant.now();
        LockClient holderClient = client(OPTIONS.toBuilder().owner("inspect-holder").build());
        Lease lease = holderClient.lock(name).tryLock(OPTIONS.lease()).orElseThrow();

        LockState state = observer.lock(name).inspect();
        assertThat(state.isHeld()).as("the lock while held: %s", state).isTrue();
        Holder holder = state.holder().orElseThrow();
        assertThat(holder.owner()).isEqualTo("inspect-holder");
        assertThat(holder.clientStarted()).as("when the holder's client started").isBetween(before.minusSeconds(1), Instant.now());
        assertThat(holder.thread()).as("the thread that acquired").isEqualTo(Thread.currentThread().getName());
        assertThat(state.token()).as("the grant's token").hasValue(lease.fencingToken());
        assertThat(state.expiresIn()).as("the holder's session, the most the broker keeps a silent member").hasValue(SESSION);
        assertThat(state.waiters()).as("waiters in a group of the holder alone").hasValue(0);
        assertThat(state.since()).as("the request's time the holder wrote in the commit's metadata: %s", state)
                .hasValueSatisfying(t -> {
                    assertThat(t.source()).isEqualTo(GrantTime.Source.HOLDER_AT_REQUEST);
                    assertThat(t.at()).isBetween(before, Instant.now());
                });

        String metadata = committed(group).metadata();
        ConsumerGroupDescription description = admin().describeConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS).get(group);
        MemberDescription assigned = description.members().stream()
                .filter(m -> m.assignment().topicPartitions().contains(new TopicPartition(group, 0))).findFirst().orElseThrow();
        assertThat(metadata).as("the raw metadata of the confirming commit")
                .startsWith(holder.toString() + " ")
                .contains(" member=" + assigned.consumerId() + " ", " token=" + lease.fencingToken() + " ");
        assertThat(metadata.length()).as("the metadata's length, under offset.metadata.max.bytes").isLessThan(4096);
        assertThat(assigned.consumerId()).as("the member id, which begins with the client id").startsWith(assigned.clientId());

        lease.close();
        assertThat(observer.lock(name).inspect().isHeld()).as("the lock after release").isFalse();
        assertThat(committed(group).metadata()).as("the released holder's commit, still in the group").isEqualTo(metadata);
    }

    @Test
    @DisplayName("with handover=rejoin a waiter keeps the group rebalancing; the holder still reads as the holder, with"
            + " that one waiter, in every state")
    void holderReadWhileTheGroupRebalances() throws Exception {
        LockOptions rejoin = OPTIONS.toBuilder().backendOption(KafkaLockProvider.HANDOVER, "rejoin").build();
        String name = name("rebalancing");
        String group = TopicNames.topic(PREFIX, name);
        LockClient observer = client(OPTIONS);
        Lease lease = BROKER.track(client(rejoin.toBuilder().owner("inspect-holder").build()).lock(name).tryLock(OPTIONS.lease())
                .orElseThrow());
        LockClient waiter = client(rejoin.toBuilder().owner("inspect-waiter").build());
        ExecutorService pool = Executors.newSingleThreadExecutor();
        BROKER.track(pool::shutdownNow);
        Future<Optional<Lease>> waiting = pool.submit(() -> waiter.lock(name).tryLock(OPTIONS.lease().multipliedBy(2)));
        Awaitility.await("the waiter counted").atMost(OPTIONS.lease()).pollInterval(Duration.ofMillis(50))
                .until(() -> observer.lock(name).inspect().waiters().equals(OptionalInt.of(1)));

        int duringRebalance = 0;
        long until = System.nanoTime() + OPTIONS.lease().toNanos();
        while (duringRebalance < 5 && System.nanoTime() - until < 0) {
            GroupState seen = admin().describeConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS).get(group).groupState();
            LockState state = observer.lock(name).inspect();
            assertThat(state.holder().map(Holder::owner)).as("the holder read right after the group was %s", seen)
                    .hasValue("inspect-holder");
            assertThat(state.token()).hasValue(lease.fencingToken());
            assertThat(state.waiters()).as("the waiters read right after the group was %s", seen).hasValue(1);
            if (seen == GroupState.PREPARING_REBALANCE || seen == GroupState.COMPLETING_REBALANCE) {
                duringRebalance++;
            }
        }

        assertThat(duringRebalance).as("reads right after the group was seen rebalancing, in one lease").isEqualTo(5);
        assertThat(waiting.isDone()).as("the waiter, still waiting").isFalse();
    }

    @Test
    @DisplayName("a holder whose commit carries its client id alone (a Latchkey before this one) reads as held by an unknown holder")
    void commitOfAnOlderVersion() throws Exception {
        String name = name("older");
        String group = TopicNames.topic(PREFIX, name);
        LockClient observer = client(OPTIONS);
        observer.lock(name).tryLock(OPTIONS.lease()).orElseThrow().close(); // the lock's topic, and a commit of this version
        TopicPartition partition = new TopicPartition(group, 0);
        Map<String, Object> c = new HashMap<>();
        c.put("bootstrap.servers", server().bootstrapServers());
        c.put("group.id", group);
        c.put("client.id", "latchkey-" + group + "-older");
        c.put("group.protocol", "classic");
        c.put("partition.assignment.strategy", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
        c.put("enable.auto.commit", false);
        c.put("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        c.put("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        try (KafkaConsumer<byte[], byte[]> older = new KafkaConsumer<>(c)) {
            older.subscribe(List.of(group));
            long until = System.nanoTime() + OPTIONS.lease().multipliedBy(2).toNanos();
            while (!older.assignment().contains(partition)) {
                assertThat(System.nanoTime() - until).as("the older holder's assignment, within two leases").isNegative();
                older.poll(Duration.ofMillis(50));
            }
            older.commitSync(Map.of(partition, new OffsetAndMetadata(0L, "latchkey-" + group + "-older")));

            LockState state = observer.lock(name).inspect();
            assertThat(state.holder()).as("the older holder: %s", state).hasValue(Holder.UNKNOWN);
            assertThat(state.token()).as("its token, which its commit does not carry").isEmpty();
            assertThat(state.waiters()).as("waiters behind the older holder, the group's only member").hasValue(0);
        }
        assertThat(observer.lock(name).inspect().isHeld()).as("the lock once the older holder left").isFalse();
    }

    @Test
    @DisplayName("a client cut off the broker gets LockBackendUnavailableException from inspect within the timeout, naming"
            + " the lock; it reads again once the cut heals")
    void unreachableBrokerWithinTimeout() throws Exception {
        LockOptions options = OPTIONS.toBuilder().timeout(Duration.ofSeconds(2)).build();
        Duration slack = options.timeout().dividedBy(2);
        CuttableClient cuttable = BROKER.track(server().cuttableClient(uri -> LockClient.connect(URI.create(uri), options)));
        String name = name("cut");
        assertThat(cuttable.client().lock(name).inspect().isHeld()).as("before the cut").isFalse();

        cuttable.cut();
        long start = System.nanoTime();
        assertThatThrownBy(() -> cuttable.client().lock(name).inspect())
                .isInstanceOf(LockBackendUnavailableException.class).hasMessageContaining("'" + name + "'");
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(took).as("inspect of a cut client, timeout %s", Durations.format(options.timeout()))
                .isLessThanOrEqualTo(options.timeout().plus(slack));

        cuttable.restore();
        assertThat(cuttable.client().lock(name).inspect().isHeld()).as("after the cut healed").isFalse();
    }
}
