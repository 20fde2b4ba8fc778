package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.LockState;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.CrashFailover;
import io.latchkey.testkit.fault.OptionsUri;
import io.latchkey.testkit.kafka.KafkaServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What the semaphore contract does not see on the broker: the topics and groups a semaphore uses. */
class KafkaSemaphoreTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(6)).build();
    private static final String PREFIX = KafkaLockProvider.DEFAULT_PREFIX;
    private static final Duration WAIT = OPTIONS.timeout().multipliedBy(2);

    @RegisterExtension
    static final KafkaBroker BROKER = new KafkaBroker();

    private static KafkaServer server() {
        return BROKER.server();
    }

    private static Admin admin() {
        return BROKER.admin();
    }

    private LockClient client() {
        return client(OPTIONS);
    }

    private LockClient client(LockOptions options) {
        return BROKER.client(options, new Properties());
    }

    private static String name(String tag) {
        return "kafka-semaphore:" + tag + ":" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    }

    private static TopicDescription topic(String topic) throws Exception {
        return admin().describeTopics(List.of(topic)).topicNameValues().get(topic).get(30, TimeUnit.SECONDS);
    }

    /** The members of {@code group}, none if the broker has no such group (no member ever joined it). */
    private static int members(String group) throws Exception {
        try {
            return admin().describeConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS).get(group).members().size();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return 0;
            }
            throw e;
        }
    }

    @Test
    @Tag("zero-wait")
    @DisplayName("with the default options a zero wait is granted the permit free beside a holder within the timeout,"
            + " and on a full semaphore is empty within the timeout")
    void zeroWaitBesideAHolderWithTheDefaultOptions() throws Exception {
        LockOptions defaults = LockOptions.builder().build();
        Duration slack = defaults.safetyMargin().compareTo(defaults.timeout().dividedBy(2)) > 0
                ? defaults.safetyMargin() : defaults.timeout().dividedBy(2);
        String name = name("zero-wait-defaults");
        BROKER.track(client(defaults).semaphore(name, 2).tryAcquire(Duration.ZERO).orElseThrow(
                () -> new AssertionError("no permit of a free semaphore with a zero wait")));

        long start = System.nanoTime();
        SemaphoreLease second = BROKER.track(client(defaults).semaphore(name, 2).tryAcquire(Duration.ZERO).orElseThrow(
                () -> new AssertionError("no permit with a zero wait while one of two was free")));
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(second.isValid()).isTrue();
        assertThat(took).as("a zero wait granted the free permit beside a holder")
                .isLessThanOrEqualTo(defaults.timeout().plus(slack));

        start = System.nanoTime();
        assertThat(client(defaults).semaphore(name, 2).tryAcquire(Duration.ZERO)).as("a zero wait on a full semaphore").isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("a zero wait on a full semaphore")
                .isLessThanOrEqualTo(defaults.timeout().plus(slack));
    }

    @Test
    @DisplayName("a semaphore and a lock of one name are apart on the broker: a topic of N partitions with a group per"
            + " slot, and a topic of one with its group, each group with its own holder; the slots not taken have no member")
    void semaphoreAndLockOfOneNameAreApartOnTheBroker() throws Exception {
        String name = name("apart");
        LockClient client = client();
        String lockTopic = TopicNames.topic(PREFIX, name);
        String semaphoreTopic = TopicNames.semaphoreTopic(PREFIX, name);

        SemaphoreLease permit = BROKER.track(client.semaphore(name, 3).tryAcquire(WAIT).orElseThrow());
        Lease lock = BROKER.track(client.lock(name).tryLock(WAIT).orElseThrow());

        assertThat(semaphoreTopic).isNotEqualTo(lockTopic);
        assertThat(topic(semaphoreTopic).partitions()).as("partitions of the semaphore's topic").hasSize(3);
        assertThat(topic(lockTopic).partitions()).as("partitions of the lock's topic").hasSize(1);
        for (int slot = 0; slot < 3; slot++) {
            assertThat(members(TopicNames.slotGroup(semaphoreTopic, slot))).as("members of slot %d's group", slot)
                    .isEqualTo(slot == permit.slot() ? 1 : 0);
        }
        String held = TopicNames.slotGroup(semaphoreTopic, permit.slot());
        assertThat(members(lockTopic)).as("members of the lock's group").isEqualTo(1);
        lock.close();
        assertThat(members(lockTopic)).as("members of the lock's group after its release").isZero();
        assertThat(members(held)).as("members of the held slot's group after the lock's release").isEqualTo(1);
        assertThat(permit.isValid()).isTrue();
    }

    @Test
    @DisplayName("another number of permits is refused by a second client naming the semaphore, the topic and both"
            + " numbers, while a permit is held and after every permit was released (the topic keeps the number)")
    void mismatchedPermitsAcrossClients() throws Exception {
        String name = name("mismatch");
        String topic = TopicNames.semaphoreTopic(PREFIX, name);
        SemaphoreLease held = BROKER.track(client().semaphore(name, 2).tryAcquire(WAIT).orElseThrow());
        LockClient other = client();

        assertThatThrownBy(() -> other.semaphore(name, 5).tryAcquire(WAIT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(name).hasMessageContaining(topic).hasMessageFindingMatch("\\b2 permits\\b")
                .hasMessageFindingMatch("\\b5\\b");
        assertThat(held.isValid()).as("the holder after the refused request").isTrue();
        held.close();
        assertThatThrownBy(() -> client().semaphore(name, 1).tryAcquire(WAIT)).as("a new client after the release")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(name)
                .hasMessageFindingMatch("\\b2 permits\\b").hasMessageFindingMatch("\\b1\\b");
        assertThat(topic(topic).partitions()).as("partitions of the semaphore's topic").hasSize(2);
        try (SemaphoreLease again = other.semaphore(name, 2).tryAcquire(WAIT).orElseThrow()) {
            assertThat(again.permits()).isEqualTo(2);
        }
    }

    @Test
    @Tag("inspection")
    @DisplayName("a permit's holder text is the metadata of its slot group's confirming commit, with the member id"
            + " and the commit's time but no token; inspect reads it back with the token of the grant marker; another"
            + " number of permits is refused; a semaphore nobody used reads as free and gets no topic")
    void inspectReadsTheHolderFromTheSlotsCommit() throws Exception {
        String name = name("inspect");
        String topic = TopicNames.semaphoreTopic(PREFIX, name);
        LockClient observer = client();
        assertThat(observer.semaphore(name, 2).inspect()).as("before any grant")
                .containsExactly(LockState.free(name), LockState.free(name));
        assertThat(admin().listTopics().names().get(30, TimeUnit.SECONDS)).as("topics after the read")
                .doesNotContain(topic);

        long before = System.currentTimeMillis();
        SemaphoreLease permit = BROKER.track(client(OPTIONS.toBuilder().owner("slot-holder").build()).semaphore(name, 2)
                .tryAcquire(WAIT).orElseThrow());
        TopicPartition partition = new TopicPartition(topic, permit.slot());
        String metadata = admin().listConsumerGroupOffsets(TopicNames.slotGroup(topic, permit.slot()))
                .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS).get(partition).metadata();
        LockState slot = observer.semaphore(name, 2).inspect().get(permit.slot());

        Holder holder = slot.holder().orElseThrow(() -> new AssertionError("no holder in slot " + permit.slot()
                + ": " + slot));
        assertThat(holder.owner()).isEqualTo("slot-holder");
        assertThat(holder.thread()).isEqualTo(Thread.currentThread().getName());
        assertThat(metadata).as("the raw metadata of the slot's confirming commit").startsWith(holder + " ")
                .contains(" member=latchkey-" + TopicNames.slotGroup(topic, permit.slot()) + "-")
                .doesNotContain(" token=");
        assertThat(GrantMetadata.parse(metadata).orElseThrow().confirmedMs()).as("when the commit was sent, ms")
                .isBetween(before, System.currentTimeMillis());
        assertThat(slot.token()).as("the token of the slot's grant marker").hasValue(permit.fencingToken());
        assertThat(slot.expiresIn()).as("the holder's session").hasValueSatisfying(d -> assertThat(d)
                .isPositive().isLessThan(OPTIONS.lease()));
        assertThatThrownBy(() -> client().semaphore(name, 3).inspect()).as("another number of permits")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(name)
                .hasMessageFindingMatch("\\b2 permits\\b").hasMessageFindingMatch("\\b3\\b");
    }

    @Test
    @DisplayName("a killed holder's permit is free within lease plus the waiter's wake-up (250 ms), at the default"
            + " heartbeat")
    void killedHoldersPermitIsFreeWithinLeasePlusWakeUp() throws Exception {
        LockOptions defaults = LockOptions.builder().lease(OPTIONS.lease()).build();
        String uri = OptionsUri.of(server().uri(server().endpoints()), defaults);
        CrashFailover.permit(uri, client(defaults), name("crash"), 2, defaults.lease(), 2);
    }
}
