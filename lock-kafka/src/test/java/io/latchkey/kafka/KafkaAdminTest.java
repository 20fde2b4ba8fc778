package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.LockState;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code forceRelease()} and {@code list()} on Kafka beyond the kit's Admin group: the removed holder says why
 * it lost the lock and does not join the group again, and a held name too long for a group id is listed by
 * its grant marker.
 */
class KafkaAdminTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(6)).build();

    @RegisterExtension
    static final KafkaBroker BROKER = new KafkaBroker();

    private static String name(String tag) {
        return "kafka-admin:" + tag + ":" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    }

    private static LockClient client(LockOptions options) {
        return BROKER.client(options, new Properties());
    }

    private static ConsumerGroupDescription group(String group) throws Exception {
        return BROKER.admin().describeConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS).get(group);
    }

    @Test
    @DisplayName("a force-released holder learns it was removed from the group, and its member stays out: the group is"
            + " the waiter's alone, which holds the lock with a higher token")
    void removedHolderStaysOut() throws Exception {
        String name = name("removed");
        String group = TopicNames.topic(KafkaLockProvider.DEFAULT_PREFIX, name);
        Lease lease = BROKER.track(client(OPTIONS.toBuilder().owner("removed-holder").build()).lock(name)
                .tryLock(OPTIONS.lease()).orElseThrow());
        LockClient waiter = client(OPTIONS.toBuilder().owner("next-holder").build());
        ExecutorService pool = Executors.newSingleThreadExecutor();
        BROKER.track(pool::shutdownNow);
        Future<Optional<Lease>> waiting = pool.submit(() -> waiter.lock(name).tryLock(OPTIONS.lease().multipliedBy(4)));
        Awaitility.await("the waiter in the group").atMost(Duration.ofSeconds(30))
                .until(() -> group(group).members().size() == 2);

        LockState ended = client(OPTIONS).lock(name).forceRelease();
        assertThat(ended.token()).as("the ended grant's token").hasValue(lease.fencingToken());
        assertThat(ended.waiters()).as("the waiters behind the ended grant, as read before the removal").hasValue(1);
        Lease next = BROKER.track(waiting.get(OPTIONS.lease().multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS).orElseThrow());
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        Exception why = lease.lost().toCompletableFuture().get(OPTIONS.lease().toMillis(), TimeUnit.MILLISECONDS);
        assertThat(why).hasMessageContaining(name).hasMessageContaining("removed from consumer group '" + group + "'");

        Thread.sleep(OPTIONS.lease().toMillis()); // a rejoin of the removed member would show by now
        assertThat(group(group).members()).as("the group's members a lease later").extracting(MemberDescription::clientId)
                .singleElement().satisfies(id -> assertThat(id).startsWith("latchkey-" + group + "-"));
        LockState now = client(OPTIONS).lock(name).inspect();
        assertThat(now.token()).as("the holder now").hasValue(next.fencingToken());
        assertThat(now.waiters()).as("waiters behind the holder now, the group's only member").hasValue(0);
        assertThat(lease.isValid()).isFalse();
    }

    @Test
    @DisplayName("a held name too long for a group id, which keeps only its hash, is listed by the key of its grant"
            + " marker, in order with the others")
    void longNameIsListed() throws Exception {
        String prefix = name("long") + "/";
        String longName = prefix + "m" + "ü".repeat(200);
        assertThat(TopicNames.isCut(KafkaLockProvider.DEFAULT_PREFIX, TopicNames.topic(KafkaLockProvider.DEFAULT_PREFIX,
                longName))).as("the long name's group id is cut").isTrue();
        LockClient holder = client(OPTIONS);
        BROKER.track(holder.lock(longName).tryLock(OPTIONS.lease()).orElseThrow());
        BROKER.track(holder.lock(prefix + "z").tryLock(OPTIONS.lease()).orElseThrow());
        BROKER.track(holder.lock(prefix + "a").tryLock(OPTIONS.lease()).orElseThrow());

        LockClient reader = client(OPTIONS);
        assertThat(reader.list(prefix)).containsExactly(prefix + "a", longName, prefix + "z");
        assertThat(reader.list(prefix, prefix + "a", 1)).containsExactly(longName);
    }
}
