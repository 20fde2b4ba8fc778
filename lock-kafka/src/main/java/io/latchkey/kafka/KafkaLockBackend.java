package io.latchkey.kafka;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.GrantRecord;
import io.latchkey.spi.HolderStamp;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.PermitLease;
import io.latchkey.spi.SemaphoreBackend;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kafka backend: one single-partition topic per lock, whose consumer group's assignment decides
 * the holder; one topic of {@code N} partitions per semaphore of {@code N} permits, and a consumer
 * group per slot that hands out that slot's partition.
 *
 * <p>It shares one admin client (topic checks and creation) and one producer (the fencing markers,
 * all on one token topic) between all locks; each contender is a {@link GroupMember} with its own
 * consumer, polled by a thread of its own until it holds and then by this client's one thread for holders
 * ({@link HeldPolls}), a semaphore's acquire one per slot ({@link PermitRace}), whose waits
 * run on a pool of this client's. Connect is {@link KafkaConnect}'s, the topics {@link KafkaTopics}', the
 * markers and slot records {@link KafkaRecords}', and the wording of failures {@link KafkaErrors}'.
 * Thread-safe.
 */
final class KafkaLockBackend implements SemaphoreBackend {

    private static final Logger log = LoggerFactory.getLogger(KafkaLockBackend.class);
    /** Numbers this JVM's Kafka clients: members' consumers, admin clients and slot readers. */
    static final AtomicInteger MEMBERS = new AtomicInteger();
    /** Lock topics kept known per client: about 200 bytes each, so at most some 200 KB. */
    static final int TOPIC_CACHE_SIZE = 1024;

    private final Map<String, Object> clientConfig;
    private final LockOptions options;
    private final String prefix;
    /** The members' heartbeat interval, ms. */
    private final int heartbeatMs;
    /** The groups' session.timeout.ms: the lease minus one heartbeat interval; see {@link #consumerConfig}. */
    private final int sessionMs;
    private final String bootstrap;
    private final Admin admin;
    private final Producer<byte[], byte[]> producer;
    private final KafkaErrors errors;
    private final KafkaTopics topics;
    private final KafkaRecords records;
    private final KafkaInspection inspection;
    private final KafkaPermitInspection permitInspection;
    private final ForceRelease forceRelease;
    private final HeldLocks heldLocks;
    /** The holder text of this client's grants. */
    private final HolderStamp holderStamp;
    private final Set<GroupMember> members = ConcurrentHashMap.newKeySet();
    /** Whether waiters park in a pending rejoin ({@code handover=rejoin}); see {@code GroupMember}. */
    private final boolean parkWaiters;
    /** Where the waits of a semaphore acquire's members run, a thread each while they wait. */
    private final ExecutorService permitWaits;
    /** The polls of the members that hold. */
    private final HeldPolls heldPolls = new HeldPolls("latchkey-kafka-held-" + MEMBERS.incrementAndGet());

    /**
     * Connects.
     *
     * @param clientConfig the application's Kafka client settings, {@code bootstrap.servers} included
     * @param replicationFactor the replication factor of new lock topics, or 0 for up to 3 as the cluster allows
     * @throws IllegalArgumentException if the {@code heartbeat} or {@code handover} option, or the Kafka
     *     properties' {@code heartbeat.interval.ms}, is bad; before anything connects
     */
    KafkaLockBackend(Map<String, Object> clientConfig, LockOptions options, String prefix, int replicationFactor) {
        this(clientConfig, options, prefix, replicationFactor, TOPIC_CACHE_SIZE);
    }

    /** As above, with {@code topicCacheSize} lock topics kept known (tests use a small one). */
    KafkaLockBackend(Map<String, Object> clientConfig, LockOptions options, String prefix, int replicationFactor,
            int topicCacheSize) {
        this.heartbeatMs = heartbeatMs(clientConfig, options);
        this.parkWaiters = parkWaiters(options);
        this.clientConfig = Map.copyOf(clientConfig);
        this.options = options;
        this.prefix = prefix;
        this.sessionMs = millis(options.lease()) - heartbeatMs;
        this.bootstrap = String.valueOf(clientConfig.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG));
        this.errors = new KafkaErrors(options, bootstrap, prefix);
        KafkaConnect.Clients clients = new KafkaConnect(options, bootstrap, sessionMs, heartbeatMs, errors).connect(clientConfig);
        this.admin = clients.admin();
        this.producer = clients.producer();
        this.topics = new KafkaTopics(admin, options, prefix, bootstrap, replicationFactor, topicCacheSize, errors);
        this.records = new KafkaRecords(this.clientConfig, options, producer, topics, errors);
        this.inspection = new KafkaInspection(admin, options, bootstrap, errors);
        this.permitInspection = new KafkaPermitInspection(admin, options, bootstrap, errors, records,
                topics.tokenTopic());
        this.forceRelease = new ForceRelease(admin, options, bootstrap, errors, inspection);
        this.heldLocks = new HeldLocks(admin, options, prefix, bootstrap, errors, records);
        this.holderStamp = new HolderStamp(options);
        AtomicInteger waitThreads = new AtomicInteger();
        this.permitWaits = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "latchkey-kafka-permit-wait-" + waitThreads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * The members' heartbeat interval, ms: the {@code heartbeat} option, else the Kafka properties'
     * {@code heartbeat.interval.ms}, else a sixth of the lease, at most 1 s. Read and checked here alone.
     *
     * @throws IllegalArgumentException if the one given is not positive or more than a third of the lease
     */
    static int heartbeatMs(Map<String, Object> clientConfig, LockOptions options) {
        int lease = millis(options.lease());
        String option = options.backendOption(KafkaLockProvider.HEARTBEAT, null);
        Duration heartbeat = null;
        if (option != null) {
            heartbeat = Durations.parse(KafkaLockProvider.HEARTBEAT, option);
            if (heartbeat.isZero() || heartbeat.compareTo(options.lease().dividedBy(3)) > 0) {
                throw new IllegalArgumentException("bad value '" + option + "' for option " + KafkaLockProvider.HEARTBEAT
                        + ": the heartbeat interval must be positive and at most a third of the lease ("
                        + Durations.format(options.lease()) + ")");
            }
        }
        Object given = clientConfig.get("heartbeat.interval.ms");
        int heartbeatMs = heartbeat != null ? millis(heartbeat)
                : given != null ? Integer.parseInt(String.valueOf(given).trim()) : Math.max(10, Math.min(1000, lease / 6));
        if (heartbeatMs <= 0 || heartbeatMs > lease / 3) {
            throw new IllegalArgumentException("heartbeat.interval.ms=" + heartbeatMs + " in the kafka properties must be"
                    + " positive and at most a third of the lease (" + Durations.format(options.lease())
                    + "); leave it unset or use the heartbeat option");
        }
        return heartbeatMs;
    }

    /**
     * Whether waiters park in a pending rejoin: the {@code handover} option, {@code heartbeat} (the
     * default) or {@code rejoin}. Read and checked here alone.
     *
     * @throws IllegalArgumentException if it is neither
     */
    static boolean parkWaiters(LockOptions options) {
        String handover = options.backendOption(KafkaLockProvider.HANDOVER, KafkaLockProvider.DEFAULT_HANDOVER);
        if (!handover.equals(KafkaLockProvider.HANDOVER_REJOIN) && !handover.equals(KafkaLockProvider.HANDOVER_HEARTBEAT)) {
            throw new IllegalArgumentException("bad value '" + handover + "' for option " + KafkaLockProvider.HANDOVER
                    + ": write rejoin (a waiter takes over a release in round trips) or heartbeat (at its next heartbeat)");
        }
        return handover.equals(KafkaLockProvider.HANDOVER_REJOIN);
    }

    @Override
    public String describe(String lockName) {
        return "kafka topic '" + topic(lockName) + "'";
    }

    String topic(String lockName) {
        return TopicNames.topic(prefix, lockName);
    }

    @Override
    public BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        String topic = topic(lockName);
        boolean known = topics.ensureLockTopic(lockName, topic);
        topics.ensureTokenTopic(lockName);
        GroupMember member = new GroupMember(this, lockName, topic, MEMBERS.incrementAndGet(), evidence);
        member.knownName = known;
        return await(member, topic, deadline);
    }

    /**
     * Kafka offers no read-write locks: its holders are decided by group rebalances, and a rebalance
     * waits for every member to rejoin (see the package's decisions).
     */
    @Override
    public String whyNoReadWriteLocks() {
        return "Kafka decides holders by consumer-group rebalances, and in one group every reader's arrival would be a"
                + " rebalance that every reader holding must rejoin, so a waiter that crashed would cost every reader its"
                + " lease; a group per reader, as semaphores keep a group per permit, would cost a write one join per reader";
    }

    @Override
    public String describeSemaphore(String name) {
        return "kafka topic '" + semaphoreTopic(name) + "'";
    }

    String semaphoreTopic(String name) {
        return TopicNames.semaphoreTopic(prefix, name);
    }

    /**
     * A permit is membership of one slot's group holding that slot's partition of the semaphore's
     * topic, exactly as a lock is the one partition of its own topic: the same member, renewal,
     * evidence and release. An acquire runs a member in every slot's group and keeps the first granted
     * ({@link PermitRace}). The topic's number of partitions is the semaphore's number of permits, read
     * once per client (and again when the cache forgot the name).
     */
    @Override
    public PermitLease acquirePermit(String name, int permits, Deadline deadline, LeaseEvidence evidence)
            throws InterruptedException {
        String topic = semaphoreTopic(name);
        boolean known = topics.ensureSemaphoreTopic(name, topic, permits);
        topics.ensureTokenTopic(name);
        PermitRace race = new PermitRace(this, name, topic, permits, known, evidence, permitWaits);
        members.addAll(race.members());
        GroupMember granted = race.await(deadline);
        if (granted == null) {
            forgetIfMissing(race.members(), topic);
            return null;
        }
        return handOut(granted);
    }

    private GroupMember await(GroupMember member, String topic, Deadline deadline) throws InterruptedException {
        members.add(member);
        boolean granted = false;
        try {
            member.start(deadline.nanoTime());
            granted = member.awaitGrant(deadline.nanoTime());
        } finally {
            if (!granted) {
                member.release();
            }
        }
        if (!granted) {
            forgetIfMissing(List.of(member), topic);
            return null;
        }
        return handOut(member);
    }

    /** A topic deleted since it was cached would look held for ever: look it up next time. */
    private void forgetIfMissing(List<GroupMember> notGranted, String topic) {
        if (notGranted.stream().anyMatch(GroupMember::topicMissing)) {
            topics.forget(topic);
        }
    }

    /**
     * Hands the member out as the lease: a lock's member wrote its grant marker before its confirming
     * commit; a semaphore's appends it now, once chosen, and is released if that fails.
     */
    private GroupMember handOut(GroupMember member) throws InterruptedException {
        if (member.markedAtGrant()) {
            return member;
        }
        boolean handedOut = false;
        try {
            member.setToken(grantMarker(member.lockName(), member.clientId()));
            handedOut = true;
            return member;
        } finally {
            if (!handedOut) {
                member.release();
            }
        }
    }

    /**
     * Appends a grant marker for {@code lockName} to the token topic; its offset is the grant's fencing
     * token. Its value names the grantee (a member's client id, and the holder text of a lock's).
     */
    long grantMarker(String lockName, String grantee) throws InterruptedException {
        return records.produceMarker(lockName, topics.tokenTopic(), grantee);
    }

    /**
     * Who holds lock {@code lockName} now, by the group's coordinator: the member assigned the lock's
     * partition whose commit confirmed it, with what that commit recorded; see {@link KafkaInspection}.
     * Creates nothing: a name never used has no group, and reads as free.
     */
    @Override
    public Optional<GrantRecord> inspect(String lockName) throws InterruptedException {
        return inspection.inspect(lockName, topic(lockName));
    }

    /**
     * Who holds each slot of semaphore {@code name}: its group's member assigned the slot's partition whose commit
     * confirmed it, with the holder text and session that commit recorded and the token of its grant marker; see
     * {@link KafkaPermitInspection}. Creates nothing: a semaphore never used has no topic, and reads as free.
     */
    @Override
    public Map<Integer, GrantRecord> inspectPermits(String name, int permits) throws InterruptedException {
        return permitInspection.inspect(name, semaphoreTopic(name), permits);
    }

    /** Removes every member of the lock's group, its holder's grant read just before; see {@link ForceRelease}. */
    @Override
    public Optional<GrantRecord> forceRelease(String lockName) throws InterruptedException {
        return forceRelease.forceRelease(lockName, topic(lockName));
    }

    /** The held locks' names, from the groups the brokers list and describe; see {@link HeldLocks}. */
    @Override
    public List<String> list(String prefix, String after, int limit) throws InterruptedException {
        return heldLocks.list(prefix, after, limit);
    }

    /**
     * The number of members of group {@code groupId} other than {@code ownMemberId} the coordinator
     * counts as assigned a partition (holders of the lock or of a slot), or -1 if it did not answer
     * within {@code timeoutNanos}. The member asking is left out: the coordinator may have assigned it
     * the partition before its own poll has run the assignment.
     */
    int holders(String lockName, String groupId, String ownMemberId, long timeoutNanos) throws InterruptedException {
        Map<String, List<MemberDescription>> assigned = assignedMembers(lockName, List.of(groupId), timeoutNanos);
        return assigned == null ? -1
                : (int) assigned.get(groupId).stream().filter(m -> !ownMemberId.equals(m.consumerId())).count();
    }

    /**
     * The members of each of {@code groupIds} the coordinator counts as assigned a partition (none while
     * a group rebalances, none of a group it does not know), or {@code null} if it did not answer
     * within {@code timeoutNanos}.
     *
     * @throws LockException if the client may not describe the groups
     */
    Map<String, List<MemberDescription>> assignedMembers(String name, List<String> groupIds, long timeoutNanos)
            throws InterruptedException {
        long until = System.nanoTime() + timeoutNanos;
        Map<String, List<MemberDescription>> assigned = new HashMap<>();
        Map<String, KafkaFuture<ConsumerGroupDescription>> described = admin.describeConsumerGroups(groupIds).describedGroups();
        for (Map.Entry<String, KafkaFuture<ConsumerGroupDescription>> e : described.entrySet()) {
            try {
                assigned.put(e.getKey(), e.getValue().get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS)
                        .members().stream().filter(m -> !m.assignment().topicPartitions().isEmpty()).toList());
            } catch (ExecutionException x) {
                if (x.getCause() instanceof GroupIdNotFoundException) {
                    assigned.put(e.getKey(), List.of()); // no member has joined it yet, or the broker expired it
                    continue;
                }
                LockException refused = errors.authorizationFailure(name, "DESCRIBE group '" + e.getKey() + "'", x);
                if (refused != null) {
                    throw refused;
                }
                return null;
            } catch (TimeoutException x) {
                return null;
            }
        }
        return assigned;
    }

    /**
     * Asks the coordinator whether the member {@code clientId} has left group {@code groupId}.
     *
     * @return {@code null} if it has, or if the coordinator still counts it (it then expels it when its
     *     session ends); the failure to report if the coordinator did not answer
     */
    LockBackendUnavailableException memberLeft(String lockName, String groupId, String clientId, long timeoutNanos)
            throws InterruptedException {
        try {
            boolean present = admin.describeConsumerGroups(List.of(groupId)).all().get(timeoutNanos, TimeUnit.NANOSECONDS)
                    .get(groupId).members().stream().anyMatch(m -> clientId.equals(m.clientId()));
            if (present) {
                log.warn("lock '{}': member {} is still in consumer group '{}' after leaving; the broker expels it when"
                        + " its session of {} ends", lockName, clientId, groupId, Durations.format(Duration.ofMillis(sessionMs)));
            }
            return null;
        } catch (ExecutionException | TimeoutException e) {
            return new LockBackendUnavailableException(lockName, "releasing lock '" + lockName + "': kafka at " + bootstrap
                    + " did not confirm within " + Durations.format(options.timeout()) + " that the holder left consumer"
                    + " group '" + groupId + "' (" + KafkaErrors.cause(e) + "); the broker frees the lock when the member's session of "
                    + Durations.format(Duration.ofMillis(sessionMs)) + " ends", KafkaErrors.cause(e));
        }
    }

    /**
     * The consumer settings of a member: the application's, then what the lock needs; for a
     * semaphore of {@code permits > 0} permits, what its {@link SlotAssignor} needs.
     */
    Map<String, Object> consumerConfig(String groupId, String clientId, int permits, int slot) {
        Map<String, Object> c = new HashMap<>(clientConfig);
        int lease = millis(options.lease());
        c.put("group.id", groupId);
        c.put("client.id", clientId);
        c.put("group.protocol", "classic");
        c.remove("group.instance.id");
        // Sticky cooperative assignment never moves the partition away from its owner when another
        // member joins; range and round-robin would hand it to the joiner about half the time.
        c.put("partition.assignment.strategy", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
        if (permits > 0) {
            // A slot's group hands out that slot's partition alone: the owner keeps it, else the earliest request.
            c.put("partition.assignment.strategy", List.of(SlotAssignor.Strategy.class));
            c.put(SlotAssignor.REQUESTED_AT, System.currentTimeMillis());
            c.put(SlotAssignor.PERMITS, permits);
            c.put(SlotAssignor.SLOT, slot);
        }
        // A member's consumer is Latchkey's, one per held lock: unless the application's settings ask, it
        // pushes no client metrics to the broker (KIP-714; its reporter kept about 63 KB per consumer) and
        // registers no JMX MBeans (about 13 KB); its metrics() stay readable.
        c.putIfAbsent("metric.reporters", "");
        c.putIfAbsent("enable.metrics.push", false);
        c.put("enable.auto.commit", false);
        c.put("auto.offset.reset", "latest");
        // The broker expels a silent member session.timeout.ms after the last heartbeat it received; the
        // other members learn of it at their next heartbeat, and a waiter learns of a release the same
        // way. A session of the lease minus one heartbeat interval therefore frees the lock of a crashed
        // holder for the next waiter within the lease (plus the join and sync round trips).
        c.put("session.timeout.ms", sessionMs);
        c.put("heartbeat.interval.ms", heartbeatMs);
        c.putIfAbsent("max.poll.interval.ms", Math.max(300_000, lease));
        c.put("default.api.timeout.ms", millis(options.timeout()));
        c.put("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        c.put("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        return c;
    }

    KafkaErrors errors() {
        return errors;
    }

    KafkaRecords records() {
        return records;
    }

    HolderStamp holderStamp() {
        return holderStamp;
    }

    LockOptions options() {
        return options;
    }

    boolean parkWaiters() {
        return parkWaiters;
    }

    HeldPolls heldPolls() {
        return heldPolls;
    }

    void removed(GroupMember member) {
        members.remove(member);
    }

    /** The shared admin client's metrics; for tests. */
    Map<MetricName, ? extends Metric> adminMetrics() {
        return admin.metrics();
    }

    /** The shared producer's metrics; for tests. */
    Map<MetricName, ? extends Metric> producerMetrics() {
        return producer.metrics();
    }

    /** Lock topics known to exist; for tests. */
    int knownTopics() {
        return topics.known();
    }

    /** The topic of the fencing markers under {@code prefix}; for tests. */
    static String tokenTopic(String prefix) {
        return KafkaTopics.tokenTopic(prefix);
    }

    /** Open members; for tests. */
    Set<GroupMember> members() {
        return members;
    }

    @Override
    public void close() {
        for (GroupMember m : List.copyOf(members)) {
            try {
                m.release();
            } catch (RuntimeException e) {
                log.warn("closing: leaving the group of lock '{}' failed", m.lockName(), e);
            }
        }
        permitWaits.shutdownNow();
        records.close();
        KafkaConnect.closeQuietly(admin, producer, options.timeout());
    }

    static int millis(Duration d) {
        return (int) Math.min(Integer.MAX_VALUE, d.toMillis());
    }
}
