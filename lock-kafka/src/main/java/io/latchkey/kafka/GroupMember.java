package io.latchkey.kafka;

import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.PermitLease;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One contender for a lock or for a permit of a semaphore: a consumer in the lock's (semaphore's)
 * group and the thread that polls it, from the join until the member leaves. The member assigned the
 * lock topic's only partition holds the lock; a member assigned one of a semaphore topic's partitions
 * holds a permit, its slot the partition ({@link SlotAssignor} gives each member at most one).
 *
 * <p>The thread polls every {@value #POLL_MILLIS} ms whether the member waits or holds, so that a
 * holder is never expelled for not polling ({@code max.poll.interval.ms}) however long the business
 * code runs, and a waiter stays in the group instead of rejoining (each join or leave rebalances the
 * whole group).
 * A permit's holder polls only when it must ({@link PermitRejoin}).
 *
 * <p>Its other parts: {@link GrantWait} is the acquire's side, {@link HeartbeatEvidence} the holder's
 * evidence that the broker still keeps it (rule 7), {@link HolderSlots} a holder's schedule slots and
 * {@link LeaveConfirmation} the end of the membership. Thread-safe.
 */
final class GroupMember implements PermitLease {

    private static final Logger log = LoggerFactory.getLogger(GroupMember.class);
    static final long POLL_MILLIS = 20;

    private final KafkaLockBackend backend;
    private final String lockName;
    private final String topic;
    /** Of a semaphore, 0 for a lock. */
    private final int permits;
    /** "lock 'x'" or "semaphore 'x'", for messages. */
    private final String what;
    /** The lock's only partition; of a semaphore, the partition assigned, once it is. */
    private volatile TopicPartition partition;
    private final String clientId;
    private final LeaseEvidence evidence;
    private final HeartbeatEvidence heartbeats;
    private final GrantWait grant;
    private final PermitRejoin rejoin;
    private final LeaveConfirmation leave;
    private final HolderSlots slots;
    private final Map<String, Object> config;
    private final long timeoutNanos;
    private final Thread thread;
    private final AtomicBoolean released = new AtomicBoolean();

    private volatile boolean stopping;
    private volatile boolean holding;
    private volatile KafkaConsumer<byte[], byte[]> consumer;
    private volatile long token;
    /** The end of the wait of the acquire this member serves: no parking after it. */
    private volatile long waitUntilNanos;
    /** Set in a rebalance that did not grant the lock: the polling thread then parks the member. */
    private volatile boolean notGranted;
    /** The generation at which this member last asked to rejoin; it asks once per generation. */
    private int parkedAt = -1; // poll thread only
    private volatile boolean topicMissing;
    private volatile int generation = -1;
    private long previousPollStart; // poll thread only

    /** Whether this client used the lock's name before (its topic known): set before the member starts. */
    boolean knownName;

    GroupMember(KafkaLockBackend backend, String lockName, String topic, int n, LeaseEvidence evidence) {
        this(backend, lockName, topic, n, 0, evidence);
    }

    /** A member of semaphore {@code name} of {@code permits} permits if {@code permits > 0}, else of a lock. */
    GroupMember(KafkaLockBackend backend, String lockName, String topic, int n, int permits, LeaseEvidence evidence) {
        this.backend = backend;
        this.lockName = lockName;
        this.topic = topic;
        this.permits = permits;
        this.what = (permits > 0 ? "semaphore '" : "lock '") + lockName + "'";
        this.partition = permits > 0 ? null : new TopicPartition(topic, 0);
        this.clientId = "latchkey-" + topic + "-" + n;
        this.evidence = evidence;
        this.config = backend.consumerConfig(topic, clientId, permits);
        long session = TimeUnit.MILLISECONDS.toNanos(((Number) config.get("session.timeout.ms")).longValue());
        long maxPoll = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(String.valueOf(config.get("max.poll.interval.ms"))));
        // A member that misses a rebalance is expelled after the rebalance timeout (max.poll.interval.ms),
        // which may be shorter than the session.
        this.heartbeats = new HeartbeatEvidence(evidence, Math.min(session, maxPoll));
        this.timeoutNanos = backend.options().timeout().toNanos();
        long heartbeatNanos = TimeUnit.MILLISECONDS.toNanos(((Number) config.get("heartbeat.interval.ms")).longValue());
        this.rejoin = new PermitRejoin(backend.options(), heartbeatNanos, maxPoll, what, clientId, topic);
        this.grant = new GrantWait(backend, lockName, topic, permits, what, clientId, heartbeatNanos, rejoin.delayNanos());
        this.leave = new LeaveConfirmation(backend, lockName, topic, what, clientId, heartbeats, heartbeatNanos);
        this.slots = new HolderSlots(backend, lockName, topic, what, clientId, () -> holding, heartbeats);
        this.thread = new Thread(this::run, "latchkey-kafka-" + topic + "-" + n);
        this.thread.setDaemon(true);
    }

    /** Starts the polling thread, for an acquire that waits until {@code deadlineNanos}. */
    void start(long deadlineNanos) {
        waitUntilNanos = deadlineNanos;
        thread.start();
    }

    String lockName() {
        return lockName;
    }

    String clientId() {
        return clientId;
    }

    void setToken(long token) {
        this.token = token;
    }

    /** The group generation this member last saw; for tests. */
    int generation() {
        return generation;
    }

    boolean holding() {
        return holding;
    }

    @Override
    public long fencingToken() {
        return token;
    }

    @Override
    public boolean recordsSlots() {
        return permits == 0;
    }

    /** The permit's slot: the partition assigned; 0 for a lock. */
    @Override
    public int slot() {
        TopicPartition p = partition;
        return p == null ? -1 : p.partition();
    }

    /** The offset of this holder's marker on the lock's partition, or -1 before its first slot call; for tests. */
    long slotAnchor() {
        return slots.slotAnchor();
    }

    /**
     * Whether the lock's topic was missing from the consumer's metadata after a rebalance that did
     * not grant the lock: a topic deleted since the backend cached it, which would otherwise look held.
     */
    boolean topicMissing() {
        return topicMissing;
    }

    @Override
    public Optional<Instant> lastCompletedSlot() {
        return slots.last(partition);
    }

    @Override
    public void recordCompletedSlot(Instant slot) {
        slots.record(partition, slot);
    }

    /**
     * Waits until this member is assigned the partition, or the lock (every permit) stayed held until
     * the deadline and after; see {@link GrantWait#await}.
     *
     * @return false if it stayed held
     */
    boolean awaitGrant(long deadlineNanos) throws InterruptedException {
        return grant.await(deadlineNanos, knownName);
    }

    private void run() {
        KafkaConsumer<byte[], byte[]> c = null;
        try {
            long created = System.nanoTime();
            c = new KafkaConsumer<>(config);
            consumer = c;
            if (stopping) {
                return;
            }
            c.subscribe(List.of(topic), new Listener());
            heartbeats.start(c, created);
            previousPollStart = created;
            RejoinProbe probe = permits > 0 ? RejoinProbe.of(c, lockName) : null;
            grant.onJoinStarted(System.nanoTime());
            while (!stopping) {
                long now = System.nanoTime();
                long confirmedSentAt = heartbeats.observe(now);
                Duration pollFor = Duration.ofMillis(POLL_MILLIS);
                if (probe != null && holding) {
                    // A holder of a permit polls only when it must, as a poll would rejoin at once; see PermitRejoin.
                    pollFor = rejoin.pollFor(probe, now, generation, previousPollStart, pollFor);
                    if (pollFor == null) {
                        // The heartbeat thread handles an answer under the coordinator's lock, which the probe took:
                        // an answer counted above that expelled the member had reset its generation by then.
                        if (confirmedSentAt != Long.MIN_VALUE) {
                            heartbeats.confirm(confirmedSentAt);
                        }
                        Thread.sleep(POLL_MILLIS);
                        continue;
                    }
                }
                c.poll(pollFor);
                previousPollStart = now;
                generation = c.groupMetadata().generationId();
                if (holding && confirmedSentAt != Long.MIN_VALUE) {
                    heartbeats.confirm(confirmedSentAt);
                }
                if (notGranted) {
                    notGranted = false;
                    if (!holding) {
                        afterRebalanceWithoutGrant(c);
                    }
                }
            }
        } catch (WakeupException e) {
            if (!stopping) {
                fail(e);
            }
        } catch (Throwable e) {
            fail(e);
        } finally {
            if (c != null) {
                long closing = leave.close(c);
                if (grant.granted() && stopping) {
                    leave.confirm(closing);
                }
            }
            leave.finished();
            backend.removed(this);
        }
    }

    /**
     * After a rebalance that left the lock to another member: parks this member in a pending join,
     * so that it learns of a release at once instead of at its next heartbeat, and notes whether the
     * lock's topic is still there.
     *
     * <p>A member that sends JoinGroup starts a rebalance that the coordinator completes only when
     * every member has rejoined. The holder learns of it at its next heartbeat and rejoins at once,
     * keeping the partition (cooperative sticky assignment never moves a partition from an owner that
     * rejoins); but if the holder leaves first, its LeaveGroup completes the join phase for the members
     * waiting in it, and one of them is assigned the partition within a few round trips. The naive
     * consumer lock (a new consumer per attempt, a holder that stops polling) hands over this way.
     * The cost is one rebalance of the group per heartbeat interval of the holder while the lock is
     * contended: a JoinGroup and SyncGroup of every member and a group metadata record. A rejoin that
     * changed nothing (the coordinator answers a follower with unchanged metadata without a
     * rebalance) is not repeated before the generation moves.
     */
    private void afterRebalanceWithoutGrant(KafkaConsumer<byte[], byte[]> c) {
        try {
            topicMissing = c.partitionsFor(topic, Duration.ZERO).isEmpty();
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            topicMissing = true; // not in the consumer's metadata
        }
        int g = generation;
        if (backend.parkWaiters() && permits == 0 && !stopping && !topicMissing && g > parkedAt && System.nanoTime() - waitUntilNanos < 0) {
            parkedAt = g;
            c.enforceRebalance("latchkey: waiting for the holder to leave");
        }
    }

    private void fail(Throwable e) {
        grant.onFailure(e);
        if (holding) {
            holding = false;
            evidence.lost("polling consumer group '" + topic + "' failed: " + e, e);
        } else {
            log.debug("lock '{}': member {} of group '{}' failed", lockName, clientId, topic, e);
        }
    }

    /** Leaves the group (stopping the thread and closing the consumer) and waits for it, bounded. */
    @Override
    public void release() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        stopping = true;
        grant.onRelease();
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
        if (Thread.currentThread() == thread) {
            return; // called back from a loss signal on the polling thread: it ends after this poll
        }
        try {
            leave.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Whether a consumer's group coordinator wants to rejoin (a rebalance began) and the generation it
     * is stable in. The consumer's API tells neither before its next poll, which would rejoin at once;
     * read from kafka-clients' classic coordinator by reflection, and absent (a holder then rejoins at
     * once, as a lock's does) if this kafka-clients version hides them.
     */
    static final class RejoinProbe {
        private final Object coordinator;
        private final Method rejoinNeededOrPending;
        private final Method generationIfStable;
        private final Field generationId;

        private RejoinProbe(Object coordinator, Method rejoin, Method stable, Field id) {
            this.coordinator = coordinator;
            this.rejoinNeededOrPending = rejoin;
            this.generationIfStable = stable;
            this.generationId = id;
        }

        static RejoinProbe of(KafkaConsumer<?, ?> c, String name) {
            try {
                Field d = KafkaConsumer.class.getDeclaredField("delegate");
                d.setAccessible(true);
                Object delegate = d.get(c);
                Field f = delegate.getClass().getDeclaredField("coordinator");
                f.setAccessible(true);
                Object coordinator = f.get(delegate);
                Class<?> abstractCoordinator = Class.forName("org.apache.kafka.clients.consumer.internals.AbstractCoordinator");
                Method rejoin = coordinator.getClass().getMethod("rejoinNeededOrPending");
                Method stable = abstractCoordinator.getDeclaredMethod("generationIfStable");
                stable.setAccessible(true);
                Field id = Class.forName("org.apache.kafka.clients.consumer.internals.AbstractCoordinator$Generation")
                        .getDeclaredField("generationId");
                id.setAccessible(true);
                return new RejoinProbe(coordinator, rejoin, stable, id);
            } catch (ReflectiveOperationException | RuntimeException e) {
                log.warn("semaphore '{}': this kafka-clients version hides its coordinator's state, so a holder rejoins"
                        + " a rebalance at once and may signal a loss while another member is silent: {}", name, e.toString());
                return null;
            }
        }

        boolean rejoinNeededOrPending() {
            try {
                return (Boolean) rejoinNeededOrPending.invoke(coordinator);
            } catch (ReflectiveOperationException e) {
                return false;
            }
        }

        /** The generation the member is stable in, or -1 while it is not (rejoining, or reset by an answer that expelled it). */
        int stableGeneration() {
            try {
                Object g = generationIfStable.invoke(coordinator);
                return g == null ? -1 : generationId.getInt(g);
            } catch (ReflectiveOperationException e) {
                return -1;
            }
        }
    }

    /** Runs on the polling thread, inside {@code poll}. */
    private final class Listener implements ConsumerRebalanceListener {

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            generation = consumer.groupMetadata().generationId(); // already that of the rebalance ending here
            if (permits > 0 && !holding && partition == null && !partitions.isEmpty()) {
                partition = partitions.iterator().next(); // the assignor gives a member at most one
            }
            if (partition != null && partitions.contains(partition)) {
                consumer.pause(List.of(partition)); // its records (markers, slot records) are never read here
                // The SyncGroup request that brought this assignment left no earlier than the start of
                // the previous poll minus its own latency.
                long sentAt = previousPollStart - HeartbeatEvidence.syncLatencyNanos(consumer, timeoutNanos);
                holding = true;
                heartbeats.confirm(sentAt);
                log.debug("lock '{}': member {} was assigned partition {}", lockName, clientId, partition);
                grant.onGranted();
            } else if (!holding) {
                notGranted = true;
            }
            grant.onRebalanceEnded();
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            end(partitions, "partition " + partition + " was revoked in a rebalance of consumer group '" + topic + "'");
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            end(partitions, "the coordinator of consumer group '" + topic + "' no longer counts this member"
                    + " (its session expired, it was fenced or the group was reset), so partition " + partition + " is lost");
        }

        private void end(Collection<TopicPartition> partitions, String reason) {
            if (partition != null && partitions.contains(partition) && holding) {
                holding = false;
                if (!stopping) {
                    evidence.lost(reason, null);
                }
            }
        }
    }
}
