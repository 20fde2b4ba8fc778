package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.spi.Durations;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.LeaseClaims;
import io.latchkey.testkit.history.LeaseClaimsChecker;
import io.latchkey.testkit.kafka.KafkaServer;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
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
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * When a grant's evidence begins: a member granted after its JoinGroup's answer was held up in a
 * network cut claims no validity past the session the coordinator counts for it.
 *
 * <p>The coordinator starts a member's session when the join phase ends, and a follower's SyncGroup
 * that finds the group stable already does not renew it. So the test makes the group's leader a
 * consumer of its own, whose polls it times and whose assignor gives the lock's partition to the
 * waiter: the waiter's JoinGroup reaches the coordinator, the waiter is cut off, the leader rejoins
 * (which ends the join phase) and syncs, and half a session later the cut heals; the waiter's
 * SyncGroup is then answered at once with the partition. The waiter is cut off again as soon as it
 * holds the lock, and another client asks for it: the coordinator expels the waiter a session after
 * the last renewal of its session, and the leader gives the partition to the other client. A waiter
 * that counted its first evidence from the SyncGroup claimed the lock valid for half a session
 * after that (the seed-replayed fault that showed it: a 4.1 s cut, an overlap of 481 ms).
 */
class KafkaGrantEvidenceTest {

    private static final Duration LEASE = Duration.ofSeconds(6);
    private static final Duration HEARTBEAT = Duration.ofSeconds(1);
    private static final LockOptions OPTIONS = LockOptions.builder().lease(LEASE)
            .backendOption(KafkaLockProvider.HEARTBEAT, Durations.format(HEARTBEAT)).build();
    /** The members' session, as the backend sets it. */
    private static final Duration SESSION = LEASE.minus(HEARTBEAT);
    private static final String LEADER_CLIENT_ID = "test-leader";

    @RegisterExtension
    static final SharedServer<KafkaServer> KAFKA = SharedServer.of(KafkaLockTest.SERVER_KEY, KafkaServer::start);

    @Test
    @DisplayName("a waiter whose JoinGroup answer was held up in a cut for half a session claims no validity past its expulsion")
    void grantAfterADelayedJoinAnswerEndsBeforeTheNextGrant() throws Exception {
        KafkaServer server = KAFKA.get();
        String name = "grant-evidence:" + Long.toHexString(ThreadLocalRandom.current().nextLong());
        String group = TopicNames.topic(KafkaLockProvider.DEFAULT_PREFIX, name);
        LeaseClaims claims = new LeaseClaims();
        long origin = History.now();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", server.bootstrapServers()));
                LockClient other = LockClient.connect(URI.create("kafka://" + server.bootstrapServers()), OPTIONS);
                CuttableClient waiter = server.cuttableClient(uri -> LockClient.connect(URI.create(uri), OPTIONS));
                Leader leader = new Leader(server.bootstrapServers(), group)) {
            other.lock(name).tryLock(LEASE).orElseThrow().close(); // the lock's topic, and an empty group
            leader.start();
            Awaitility.await("the leader alone in the group").atMost(LEASE.multipliedBy(5)).pollInterval(Duration.ofMillis(20))
                    .until(() -> leader.generation() > 0);
            int alone = leader.generation();
            leader.hold();

            long requestedAt = History.now();
            Future<Optional<Lease>> waited = pool.submit(() -> {
                Optional<Lease> got = waiter.client().lock(name).tryLock(LEASE.multipliedBy(10));
                long returnedAt = History.now();
                waiter.cut(); // before the waiter's next heartbeat, a second after its SyncGroup
                got.ifPresent(lease -> {
                    LeaseClaims.Claim claim = claims.granted("waiter", name, lease.fencingToken(), requestedAt, returnedAt, 0);
                    long askedAt = History.now();
                    claim.claim(askedAt, lease.remaining().toNanos());
                    lease.lost().thenRun(() -> claim.lost(History.now()));
                });
                return got;
            });
            Awaitility.await("the waiter's JoinGroup at the coordinator, the leader yet to rejoin").atMost(LEASE.multipliedBy(5))
                    .pollInterval(Duration.ofMillis(10)).until(() -> {
                        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                        return d.members().size() == 2 && d.groupState() == GroupState.PREPARING_REBALANCE;
                    });
            waiter.cut();
            claims.note(History.now(), "test", "waiter cut, its JoinGroup unanswered");
            leader.poll(); // rejoins: the join phase ends, and the leader's SyncGroup gives the waiter the partition
            Awaitility.await("the leader's rejoin").atMost(LEASE.multipliedBy(2)).pollInterval(Duration.ofMillis(5))
                    .until(() -> leader.generation() > alone);
            long joinEnded = History.now();
            claims.note(joinEnded, "test", "the leader synced generation " + leader.generation());
            Thread.sleep(SESSION.dividedBy(2).toMillis());
            waiter.restore();
            claims.note(History.now(), "test", "waiter restored");
            Lease waiterLease = waited.get(LEASE.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS)
                    .orElseThrow(() -> new AssertionError("the waiter was not granted the lock after the cut healed"));
            claims.note(History.now(), "test", "waiter cut again, holding");

            long otherRequestedAt = History.now();
            Lease next = other.lock(name).tryLock(LEASE.multipliedBy(5)).orElseThrow(
                    () -> new AssertionError("the lock was not granted after the cut-off waiter's session"));
            long otherReturnedAt = History.now();
            claims.granted("other", name, next.fencingToken(), otherRequestedAt, otherReturnedAt, 0)
                    .claim(History.now(), next.remaining().toNanos());
            next.close();
            waiter.restore();

            List<String> violations = LeaseClaimsChecker.violations(LeaseClaimsChecker.intervals(claims), origin);
            assertThat(violations).as("two valid leases at once; the record:%n%s", LeaseClaimsChecker.describe(claims, origin))
                    .isEmpty();
            assertThat(waiterLease.isValid()).as("the cut-off waiter's lease, once the other client holds the lock").isFalse();
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The group's leader: a consumer of the test's own, polled only when the test says so (its heartbeat
     * thread keeps it in the group meanwhile), whose assignor gives the partition to its owner, else
     * to another member.
     */
    private static final class Leader implements AutoCloseable {

        private final KafkaConsumer<byte[], byte[]> consumer;
        private final String topic;
        private final Thread thread;
        private volatile boolean polling = true;
        private volatile boolean once;
        private volatile boolean stop;
        private volatile int generation = -1;
        private volatile Throwable failure;

        Leader(String bootstrap, String topic) {
            Map<String, Object> c = new HashMap<>();
            c.put("bootstrap.servers", bootstrap);
            c.put("group.id", topic);
            c.put("client.id", LEADER_CLIENT_ID);
            c.put("group.protocol", "classic");
            c.put("partition.assignment.strategy", List.of(ToOthers.class));
            c.put("session.timeout.ms", (int) SESSION.toMillis());
            c.put("heartbeat.interval.ms", (int) HEARTBEAT.toMillis());
            c.put("max.poll.interval.ms", 300_000);
            c.put("enable.auto.commit", false);
            c.put("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
            c.put("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
            this.consumer = new KafkaConsumer<>(c);
            this.topic = topic;
            this.thread = new Thread(this::run, "test-leader");
            this.thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        /** Stops polling after the current poll. */
        void hold() {
            polling = false;
        }

        /** Polls again, from now on. */
        void poll() {
            polling = true;
        }

        int generation() {
            if (failure != null) {
                throw new AssertionError("the leader's consumer failed", failure);
            }
            return generation;
        }

        private void run() {
            try {
                consumer.subscribe(List.of(topic));
                while (!stop) {
                    if (!polling) {
                        Thread.sleep(5);
                        continue;
                    }
                    consumer.poll(Duration.ofMillis(20));
                    ConsumerGroupMetadata m = consumer.groupMetadata();
                    generation = m.generationId();
                }
            } catch (Throwable e) {
                if (!stop) {
                    failure = e;
                }
            } finally {
                consumer.close(Duration.ofSeconds(5));
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop = true;
            thread.join(TimeUnit.SECONDS.toMillis(20));
        }
    }

    /**
     * An assignor under the name of the one the lock's members use ({@code cooperative-sticky}): the
     * partition stays with a member that owns it, else goes to the first member that is not the
     * leader, else to no one.
     */
    public static final class ToOthers implements ConsumerPartitionAssignor {

        @Override
        public GroupAssignment assign(Cluster metadata, GroupSubscription groups) {
            Map<String, Subscription> members = groups.groupSubscription();
            Set<String> topics = Set.copyOf(members.values().iterator().next().topics());
            TopicPartition partition = new TopicPartition(topics.iterator().next(), 0);
            String to = members.entrySet().stream().filter(e -> e.getValue().ownedPartitions().contains(partition))
                    .map(Map.Entry::getKey).findFirst()
                    .orElseGet(() -> members.keySet().stream().filter(id -> !id.startsWith(LEADER_CLIENT_ID)).sorted()
                            .findFirst().orElse(null));
            Map<String, Assignment> out = new HashMap<>();
            for (String id : members.keySet()) {
                out.put(id, new Assignment(id.equals(to) ? List.of(partition) : new ArrayList<>()));
            }
            return new GroupAssignment(out);
        }

        @Override
        public List<RebalanceProtocol> supportedProtocols() {
            return List.of(RebalanceProtocol.COOPERATIVE);
        }

        @Override
        public String name() {
            return "cooperative-sticky";
        }
    }
}
