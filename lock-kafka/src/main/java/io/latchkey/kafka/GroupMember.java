package io.latchkey.kafka;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockLostException;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.InvalidSessionTimeoutException;
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
 * A permit's holder polls only when it must (see {@code rejoinDelayNanos}): at most
 * {@code KEEP_ALIVE_NANOS} apart, far within {@code max.poll.interval.ms}.
 *
 * <p>Rule 7: a member cut off from the broker learns it was expelled only when it reconnects
 * (KAFKA-9184), so the holder keeps its own deadline from heartbeat evidence. The broker expels a
 * member no earlier than {@code session.timeout.ms} after the last heartbeat it received (and a
 * member that does not rejoin a rebalance no earlier than {@code max.poll.interval.ms} after it
 * began); every heartbeat answered is therefore reported with a time known to precede its sending.
 * The consumer sends one heartbeat at a time, so heartbeat {@code n+1} leaves after the answer to
 * heartbeat {@code n} arrived, which arrived after the last poll at which the answer count was still
 * below {@code n}: that poll's start time is the bound reported. An answer that told the member it
 * was expelled is never reported: confirmation waits for the next poll, which runs the loss callback
 * first. What remains: the consumer counts a {@code NOT_COORDINATOR} answer like any other, so while
 * the group coordinator moves to another broker one answer may be taken as evidence; the new
 * coordinator gives every member a full session from when it loaded the group, which covers it
 * unless this member stays cut off from the new coordinator for longer than the safety margin.
 * Thread-safe.
 */
final class GroupMember implements PermitLease {

    private static final Logger log = LoggerFactory.getLogger(GroupMember.class);
    static final long POLL_MILLIS = 20;
    /** How often a permit's holder polls when nothing else makes it: far within {@code max.poll.interval.ms}. */
    private static final long KEEP_ALIVE_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final String COORDINATOR_METRICS = "consumer-coordinator-metrics";

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
    private final Map<String, Object> config;
    private final long ttlNanos;
    private final long timeoutNanos;
    private final Thread thread;
    private final CountDownLatch finished = new CountDownLatch(1);
    private final AtomicBoolean released = new AtomicBoolean();

    private final Object state = new Object();
    private boolean granted; // guarded by state
    private int rebalances; // guarded by state
    private Throwable failure; // guarded by state

    private volatile boolean stopping;
    private volatile boolean holding;
    private volatile KafkaConsumer<byte[], byte[]> consumer;
    private volatile long token;
    /** The offset of this holder's marker on the lock's own partition, written before its first slot record or read. */
    private long slotAnchor = -1; // guarded by anchorLock
    private final Object anchorLock = new Object();
    /** The end of the wait of the acquire this member serves: no parking after it. */
    private volatile long waitUntilNanos;
    /**
     * When the polling thread first polled, which sends this member's JoinGroup; valid once
     * {@link #joinStarted}. A zero wait's stay past its deadline counts from here, so that the member's
     * own set-up (the topic's lookup, the consumer's construction in a cold JVM) is not taken from it.
     */
    private volatile long joinStartedNanos;
    private volatile boolean joinStarted;
    /** Set in a rebalance that did not grant the lock: the polling thread then parks the member. */
    private volatile boolean notGranted;
    /** The generation at which this member last asked to rejoin; it asks once per generation. */
    private int parkedAt = -1; // poll thread only
    private volatile boolean topicMissing;
    /** Before this nanoTime the broker keeps this member in the group; from the last confirmation. */
    private volatile long keptUntilNanos = Long.MIN_VALUE;
    private volatile int generation = -1;
    private long previousPollStart; // poll thread only
    private volatile long lastAnswerNanos = System.nanoTime();
    private final long heartbeatNanos;
    /**
     * How long a permit's holder keeps heartbeating before it rejoins a rebalance of its group: the
     * safety margin, three heartbeat intervals and a tenth of the timeout. The coordinator completes
     * the join phase only once every member has rejoined or its session has ended, and a member whose
     * JoinGroup is pending sends no heartbeats, so its evidence stops. A member that went silent
     * before the rebalance began (paused, killed, cut off) keeps the phase waiting until a session
     * after its last heartbeat; a holder that rejoined at once would have only its own last heartbeat
     * before the rebalance as evidence, a session minus the margin, and would signal a loss it did not
     * suffer. Heartbeating on (the coordinator keeps a member's session alive through the rebalance
     * and answers that it is in progress) moves the holder's last evidence past the silent member's by
     * more than the margin and the round trips. The cost: a rebalance while permits are held takes
     * that much longer, and so does a hand-over.
     */
    private final long rejoinDelayNanos;
    private final long keepAliveNanos;
    /** Set by the polling thread when leaving the group could not be confirmed; thrown by {@link #release()}. */
    private volatile LockBackendUnavailableException leaveFailure;

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
        this.ttlNanos = Math.min(session, maxPoll);
        this.keepAliveNanos = Math.min(KEEP_ALIVE_NANOS, maxPoll / 3);
        this.timeoutNanos = backend.options().timeout().toNanos();
        this.heartbeatNanos = TimeUnit.MILLISECONDS.toNanos(((Number) config.get("heartbeat.interval.ms")).longValue());
        this.rejoinDelayNanos = backend.options().safetyMargin().toNanos() + 3 * heartbeatNanos + timeoutNanos / 10;
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
        synchronized (anchorLock) {
            return slotAnchor;
        }
    }

    /**
     * Whether the lock's topic was missing from the consumer's metadata after a rebalance that did
     * not grant the lock: a topic deleted since the backend cached it, which would otherwise look held.
     */
    boolean topicMissing() {
        return topicMissing;
    }

    /**
     * The offset of this holder's marker on the lock's own partition, appended at the first call. The
     * marker is written only by a holder still kept by the broker once it is appended, so it lies
     * before any later holder's marker; a slot record counts only if no other marker lies between its
     * writer's marker and itself.
     */
    private long anchor(Instant slot) throws InterruptedException {
        synchronized (anchorLock) {
            if (slotAnchor >= 0) {
                return slotAnchor;
            }
            long offset = backend.records().produceMarker(lockName, topic, clientId);
            if (!holding || System.nanoTime() - keptUntilNanos >= 0) {
                throw new LockLostException(lockName, what + " (kafka topic '" + topic + "') may have"
                        + " been granted to another holder before this holder marked its partition"
                        + (slot != null ? ": slot " + slot + " was not recorded and may run again elsewhere" : ""));
            }
            slotAnchor = offset;
            return offset;
        }
    }

    private void confirm(long sentAtNanos) {
        long until = sentAtNanos + ttlNanos;
        if (keptUntilNanos == Long.MIN_VALUE || until - keptUntilNanos > 0) {
            keptUntilNanos = until;
        }
        evidence.confirmed(sentAtNanos, Duration.ofNanos(ttlNanos));
    }

    @Override
    public Optional<Instant> lastCompletedSlot() {
        try {
            if (holding) {
                anchor(null);
            }
            return SlotRecords.last(backend, lockName, partition);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException(lockName, "interrupted while reading the last completed slot of lock '" + lockName
                    + "' (kafka topic '" + topic + "')", e);
        }
    }

    @Override
    public void recordCompletedSlot(Instant slot) {
        if (!holding) {
            throw new LockLostException(lockName, what + " (kafka topic '" + topic + "') is no longer"
                    + " assigned to this member: slot " + slot + " was not recorded and may run again elsewhere");
        }
        try {
            SlotRecords.record(backend, lockName, partition, anchor(slot), slot);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException(lockName, "interrupted while recording slot " + slot + " of lock '" + lockName
                    + "' (kafka topic '" + topic + "')", e);
        }
    }

    /**
     * Waits until this member is assigned the partition. After the deadline it still waits for the
     * first rebalance it takes part in, so that even a zero wait asks the group once.
     *
     * <p>A lock's member whose own join has not finished by then (a new name's topic, the group's first
     * join, a slow start) asks the coordinator whether anyone holds the partition, and while no one does it
     * stays for its join until a whole timeout after the deadline: a free lock is never reported as held.
     *
     * <p>A member of a semaphore stays longer while a permit is free, so that members joining together
     * with a zero wait are all granted one: a member that joined a moment after another lands in the
     * next rebalance, whose join phase waits for the holders, and they rejoin only {@code rejoinDelayNanos}
     * after they heard of it. Past the deadline such a member asks the coordinator how many members hold
     * a partition (at the end of a rebalance that did not grant it, or half the timeout after the deadline
     * if none ended); with all permits held it gives up, else it stays for the rebalance in flight until
     * {@link #stayNanos()} after the deadline.
     *
     * <p>Both stays count from the later of the deadline and the start of this member's join
     * ({@link #stayFrom}): a zero wait's own set-up is not taken from the rebalance it stays for.
     *
     * @return false if the lock (every permit) stayed held until the deadline
     */
    boolean awaitGrant(long deadlineNanos) throws InterruptedException {
        boolean staying = false; // a permit was free at the last look past the deadline
        int looked = 0; // the rebalances ended at that look
        long joinDeadline;
        long stayDeadline;
        while (true) {
            int ended;
            synchronized (state) {
                while (true) {
                    long from = stayFrom(deadlineNanos);
                    joinDeadline = from + timeoutNanos / 2;
                    stayDeadline = from + stayNanos();
                    if (failure != null) {
                        throw translate(failure);
                    }
                    if (granted) {
                        return true;
                    }
                    long now = System.nanoTime();
                    if (now - deadlineNanos >= 0 && rebalances > looked) {
                        break;
                    }
                    long until = now - deadlineNanos < 0 ? deadlineNanos : staying ? stayDeadline : joinDeadline;
                    if (now - until >= 0) {
                        break;
                    }
                    TimeUnit.NANOSECONDS.timedWait(state, Math.max(1, until - now));
                }
                ended = rebalances;
            }
            if (permits == 0 && ended > looked && knownName) {
                // a rebalance this member took part in ended and gave the lock's one partition to another
                // member: held, known without asking the coordinator (a known name costs no admin request).
                // On a name this client has not used yet the group may have been assigned before the new
                // topic's metadata reached it, which gives the partition to no one: that one asks.
                return false;
            }
            long now = System.nanoTime();
            if (staying && now - stayDeadline >= 0) {
                return false; // the rebalance in flight did not end in time (a silent member holds it up)
            }
            long bound = staying ? Math.min(timeoutNanos / 2, stayDeadline - now) : timeoutNanos / 2;
            int holders = backend.holders(lockName, topic, bound);
            if (holders < 0 && ended == 0 && !staying) {
                throw unavailable(deadlineNanos); // no rebalance, no answer: the coordinator may be gone
            }
            if (holders < 0 || holders >= Math.max(1, permits) || System.nanoTime() - stayDeadline >= 0) {
                return false;
            }
            if (!staying) {
                log.debug("{}: member {} stays for the rebalance of group '{}' in flight: {} of {} permits are held",
                        what, clientId, topic, holders, permits);
            }
            staying = true;
            looked = ended;
        }
    }

    /**
     * Where the stays past {@code deadlineNanos} begin: the later of the deadline and the start of this
     * member's join. A join that has not started yet (the consumer still being built) moves it on, for
     * at most a timeout past the deadline.
     */
    private long stayFrom(long deadlineNanos) {
        long joined = joinStarted ? joinStartedNanos : Math.min(System.nanoTime(), deadlineNanos + timeoutNanos);
        return joined - deadlineNanos > 0 ? joined : deadlineNanos;
    }

    /** Why an acquire that neither joined a rebalance nor heard the coordinator in time failed. */
    private LockBackendUnavailableException unavailable(long deadlineNanos) {
        String paused = KafkaErrors.pausedFor(Deadline.atNanoTime(deadlineNanos), Duration.ofNanos(timeoutNanos));
        if (paused != null) {
            return new LockBackendUnavailableException(lockName, "acquiring " + what + " (kafka topic '" + topic
                    + "') gave up: " + paused, null);
        }
        return new LockBackendUnavailableException(lockName, "the group coordinator of kafka topic '" + topic
                + "' (" + what + ") did not answer within " + Durations.format(backend.options().timeout())
                + "; check that the brokers run and that the __consumer_offsets topic has leaders", null);
    }

    /**
     * How long past its deadline a member stays for a rebalance while the lock or a permit is free: for a
     * lock, the timeout (its own join); for a semaphore's member, the
     * holders hear of the rebalance at their next heartbeat and rejoin {@code rejoinDelayNanos} later,
     * and half the timeout covers this member's own join and the round trips of the join and sync phases.
     */
    long stayNanos() {
        return permits == 0 ? timeoutNanos : Math.max(timeoutNanos / 2, heartbeatNanos + rejoinDelayNanos + timeoutNanos / 2);
    }

    private RuntimeException translate(Throwable e) {
        if (e instanceof ClosedWhileAcquiring closed) {
            return closed;
        }
        if (e instanceof InvalidSessionTimeoutException) {
            return new LockException(lockName, "the broker refused lease " + Durations.format(backend.options().lease())
                    + " as the session timeout of consumer group '" + topic + "' (" + what + "): " + e.getMessage()
                    + "; choose a lease within the broker's " + KafkaConnect.MIN_SESSION + " and "
                    + KafkaConnect.MAX_SESSION, e);
        }
        LockException refused = backend.errors().authorizationFailure(lockName, e instanceof GroupAuthorizationException
                ? "READ group '" + topic + "' (join the lock's consumer group)"
                : "DESCRIBE and READ topic '" + topic + "' (subscribe to the lock's topic)", e);
        if (refused != null) {
            return refused;
        }
        LockException security = backend.errors().securityFailure(lockName, "joining consumer group '" + topic + "' of "
                + what, e);
        if (security != null) {
            return security;
        }
        return new LockBackendUnavailableException(lockName, "joining consumer group '" + topic + "' of " + what
                + " failed: " + e + "; check that the brokers run and are reachable", e);
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
            Metric answers = metric(c, "heartbeat-total");
            double lastCount = 0;
            long lastObservation = created;
            long beforeLastChange = created;
            previousPollStart = created;
            RejoinProbe probe = permits > 0 ? RejoinProbe.of(c, lockName) : null;
            long delayFrom = 0;
            boolean delaying = false;
            joinStartedNanos = System.nanoTime();
            joinStarted = true;
            while (!stopping) {
                long now = System.nanoTime();
                double count = value(answers, 0);
                long confirmedSentAt = Long.MIN_VALUE;
                if (count > lastCount) {
                    confirmedSentAt = count - lastCount >= 2 ? lastObservation : beforeLastChange;
                    beforeLastChange = lastObservation;
                    lastCount = count;
                    lastAnswerNanos = now;
                }
                lastObservation = now;
                Duration pollFor = Duration.ofMillis(POLL_MILLIS);
                if (probe != null && holding) {
                    // A holder of a permit polls only to rejoin (rejoinDelay after it heard of a rebalance), to
                    // finish a join, to run a loss callback, and now and then so that the consumer never counts it
                    // stalled: a poll would rejoin at once. See rejoinDelayNanos.
                    int stable = probe.stableGeneration();
                    boolean pollNow;
                    if (stable != generation) {
                        pollNow = true; // joining, or reset by an answer that expelled the member
                        delaying = false;
                    } else if (probe.rejoinNeededOrPending()) {
                        if (!delaying) {
                            delaying = true;
                            delayFrom = now;
                            log.debug("{}: member {} heard of a rebalance of group '{}' (generation {}); it rejoins in {} ms",
                                    what, clientId, topic, generation, TimeUnit.NANOSECONDS.toMillis(rejoinDelayNanos));
                        }
                        pollNow = now - delayFrom >= rejoinDelayNanos;
                    } else {
                        delaying = false;
                        pollNow = now - previousPollStart >= keepAliveNanos;
                        pollFor = Duration.ZERO;
                    }
                    if (!pollNow) {
                        // The heartbeat thread handles an answer under the coordinator's lock, which the probe took:
                        // an answer counted above that expelled the member had reset its generation by then.
                        if (confirmedSentAt != Long.MIN_VALUE) {
                            confirm(confirmedSentAt);
                        }
                        Thread.sleep(POLL_MILLIS);
                        continue;
                    }
                }
                c.poll(pollFor);
                previousPollStart = now;
                generation = c.groupMetadata().generationId();
                if (holding && confirmedSentAt != Long.MIN_VALUE) {
                    confirm(confirmedSentAt);
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
                long closing = System.nanoTime();
                try {
                    // half the timeout for the LeaveGroup, half for confirming it if in doubt: release within the timeout
                    c.close(CloseOptions.timeout(Duration.ofNanos(timeoutNanos / 2)));
                } catch (RuntimeException e) {
                    log.warn("lock '{}': closing the consumer of group '{}' failed", lockName, topic, e);
                }
                confirmLeft(closing);
            }
            finished.countDown();
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

    /**
     * The consumer does not say whether its LeaveGroup was answered. A close that ran into its bound,
     * or a member that heard no heartbeat answer for a while, may not have left: then asks the
     * coordinator, within half the timeout, whether this member is gone, and records a failure for
     * {@link #release()} if it cannot tell. A release that reached the broker costs nothing more.
     */
    private void confirmLeft(long closingNanos) {
        if (!granted() || !stopping) {
            return;
        }
        long now = System.nanoTime();
        boolean closeTimedOut = now - closingNanos >= timeoutNanos / 2 - timeoutNanos / 20;
        boolean silent = now - lastAnswerNanos > 2 * heartbeatNanos + timeoutNanos;
        if (!closeTimedOut && !silent) {
            return;
        }
        try {
            leaveFailure = backend.memberLeft(lockName, topic, clientId, timeoutNanos / 2);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private boolean granted() {
        synchronized (state) {
            return granted;
        }
    }

    private void fail(Throwable e) {
        synchronized (state) {
            failure = e;
            state.notifyAll();
        }
        if (holding) {
            holding = false;
            evidence.lost("polling consumer group '" + topic + "' failed: " + e, e);
        } else {
            log.debug("lock '{}': member {} of group '{}' failed", lockName, clientId, topic, e);
        }
    }

    private static Metric metric(KafkaConsumer<?, ?> c, String name) {
        for (Map.Entry<MetricName, ? extends Metric> e : c.metrics().entrySet()) {
            if (e.getKey().name().equals(name) && e.getKey().group().equals(COORDINATOR_METRICS)) {
                return e.getValue();
            }
        }
        throw new IllegalStateException("kafka consumer metric " + COORDINATOR_METRICS + "/" + name + " is missing;"
                + " this kafka-clients version is not supported");
    }

    private static double value(Metric m, double fallback) {
        Object v = m.metricValue();
        if (v instanceof Number n && !Double.isNaN(n.doubleValue()) && !Double.isInfinite(n.doubleValue())) {
            return n.doubleValue();
        }
        return fallback;
    }

    /** Leaves the group (stopping the thread and closing the consumer) and waits for it, bounded. */
    @Override
    public void release() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        stopping = true;
        synchronized (state) {
            if (!granted && failure == null) {
                // wakes an acquire still waiting on this member (the client is closing)
                failure = new ClosedWhileAcquiring("the lock client was closed while " + what
                        + " (kafka topic '" + topic + "') was being acquired");
            }
            state.notifyAll();
        }
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
        if (Thread.currentThread() == thread) {
            return; // called back from a loss signal on the polling thread: it ends after this poll
        }
        try {
            if (!finished.await(2 * timeoutNanos + TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS), TimeUnit.NANOSECONDS)) {
                throw new LockBackendUnavailableException(lockName, "leaving consumer group '" + topic + "' of "
                        + what + " did not finish within " + Durations.format(backend.options().timeout().multipliedBy(2))
                        + "; the broker expels the member when its session of " + Durations.format(backend.options().lease())
                        + " expires", null);
            }
            if (leaveFailure != null) {
                throw leaveFailure;
            }
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

    /** The acquire that waited on this member ends because the client is closing. */
    private static final class ClosedWhileAcquiring extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        ClosedWhileAcquiring(String message) {
            super(message);
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
                long sentAt = previousPollStart - syncLatencyNanos();
                holding = true;
                confirm(sentAt);
                log.debug("lock '{}': member {} was assigned partition {}", lockName, clientId, partition);
                synchronized (state) {
                    granted = true;
                }
            } else if (!holding) {
                notGranted = true;
            }
            synchronized (state) {
                rebalances++;
                state.notifyAll();
            }
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

        private long syncLatencyNanos() {
            double ms = value(metric(consumer, "sync-time-max"), Double.NaN);
            return Double.isNaN(ms) ? timeoutNanos : (long) Math.ceil(ms * 1_000_000d);
        }
    }
}
