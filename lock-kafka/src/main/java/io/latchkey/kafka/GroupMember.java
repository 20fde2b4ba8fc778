package io.latchkey.kafka;

import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.PermitLease;
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
 * One contender for a lock or for one slot of a semaphore: a consumer in the lock's group (or the
 * slot's), polled by a thread of its own from the join until its grant is confirmed, then by the backend's one
 * thread for holders ({@link HeldPolls}) until the member leaves. The member assigned the
 * lock topic's only partition holds the lock; the member of slot {@code k}'s group assigned partition
 * {@code k} of the semaphore's topic holds that slot's permit ({@link SlotAssignor}). Either way the
 * group hands out one partition, so a slot's member is a lock's member in every respect but its
 * group, its partition and its assignor; {@link PermitRace} runs one per slot for an acquire.
 *
 * <p>The member is polled every {@value #POLL_MILLIS} ms whether it waits or holds, so that a
 * holder is never expelled for not polling ({@code max.poll.interval.ms}) however long the business
 * code runs, and a waiter stays in the group instead of rejoining (each join or leave rebalances the
 * whole group). A waiter's own thread polls for up to that long at a time and so takes the group's answers as
 * they come; a holder's poll takes no time ({@link #pollHeld}), so one thread serves every holder of the client.
 * A holder's consumer is closed by its releasing thread (as a waiter's by its own thread, which the release waits
 * for), or, when it stops otherwise (a loss, a semaphore's acquire that keeps another slot), by a thread started for
 * it.
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
    /** The lock's topic, or the slot's group of a semaphore. */
    private final String group;
    /** Of a semaphore, 0 for a lock. */
    private final int permits;
    /** "lock 'x'" or "semaphore 'x'", for messages. */
    private final String what;
    /** The lock's only partition; of a semaphore, the slot's. */
    private final TopicPartition partition;
    private final String clientId;
    private final LeaseEvidence evidence;
    private final HeartbeatEvidence heartbeats;
    private final GrantWait grant;
    private final LeaveConfirmation leave;
    private final HolderSlots slots;
    private final GrantConfirmation confirmation; // poll thread only
    private final Map<String, Object> config;
    private final long timeoutNanos;
    private final Thread thread;
    private final AtomicBoolean released = new AtomicBoolean();
    /** Whether this member's consumer was closed or is being closed: by one thread only. */
    private final AtomicBoolean finishing = new AtomicBoolean();
    /** Held by {@link HeldPolls}'s thread while it polls this member, so that a release closes the consumer after. */
    private final Object pollLock = new Object();
    /** {@link HeldPolls}'s thread while it polls this member, else null. */
    private volatile Thread polledBy;

    private volatile boolean stopping;
    /** Its own thread ended with the grant confirmed, and {@link HeldPolls} polls it; set under {@link #handOffLock}. */
    private volatile boolean handedOff;
    /** Orders a hand-off and the start of a release: one of them sees the other. */
    private final Object handOffLock = new Object();
    /** Stopped when its lease was lost: else it would rejoin, a candidate under the lost lease. */
    private volatile boolean stoppedByLoss;
    /** When {@link #leave} was called; valid once {@link #stopping}. */
    private volatile long stopRequestedNanos;
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
    /** The member id the coordinator gave this member, once it joined; empty before. */
    private volatile String memberId = "";
    /** Assigned the partition, but no commit has confirmed it yet: not holding yet. */
    private boolean unconfirmed; // poll thread only

    /** Whether this client used the lock's name before (its topic known): set before the member starts. */
    boolean knownName;

    GroupMember(KafkaLockBackend backend, String lockName, String topic, int n, LeaseEvidence evidence) {
        this(backend, lockName, topic, topic, 0, 0, n, String.valueOf(n), evidence);
    }

    /**
     * A member of slot {@code slot}'s group of semaphore {@code name} of {@code permits} permits, for the
     * acquire {@code race}: its client id ends with it, the same in every slot's group.
     */
    GroupMember(KafkaLockBackend backend, String name, String topic, int slot, int permits, int n, String race,
            LeaseEvidence evidence) {
        this(backend, name, topic, TopicNames.slotGroup(topic, slot), slot, permits, n, race, evidence);
    }

    private GroupMember(KafkaLockBackend backend, String lockName, String topic, String group, int slot, int permits,
            int n, String clientIdSuffix, LeaseEvidence evidence) {
        this.backend = backend;
        this.lockName = lockName;
        this.topic = topic;
        this.group = group;
        this.permits = permits;
        this.what = (permits > 0 ? "semaphore '" : "lock '") + lockName + "'";
        this.partition = new TopicPartition(topic, slot);
        this.clientId = "latchkey-" + group + "-" + clientIdSuffix;
        this.evidence = evidence;
        this.config = backend.consumerConfig(group, clientId, permits, slot);
        long sessionMs = ((Number) config.get("session.timeout.ms")).longValue();
        long session = TimeUnit.MILLISECONDS.toNanos(sessionMs);
        long maxPoll = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(String.valueOf(config.get("max.poll.interval.ms"))));
        // A member that misses a rebalance is expelled after the rebalance timeout (max.poll.interval.ms),
        // which may be shorter than the session.
        this.heartbeats = new HeartbeatEvidence(evidence, Math.min(session, maxPoll));
        this.timeoutNanos = backend.options().timeout().toNanos();
        long heartbeatNanos = TimeUnit.MILLISECONDS.toNanos(((Number) config.get("heartbeat.interval.ms")).longValue());
        this.grant = new GrantWait(backend, lockName, topic, group, what, clientId, () -> memberId);
        this.leave = new LeaveConfirmation(backend, lockName, group, what, clientId, heartbeats, heartbeatNanos);
        this.slots = new HolderSlots(backend, lockName, topic, what, clientId, () -> holding, heartbeats);
        // the acquiring thread builds the member: the holder text names it
        this.confirmation = new GrantConfirmation(backend, lockName, what, clientId, partition,
                backend.holderStamp().forCurrentThread(), sessionMs, permits == 0);
        this.thread = new Thread(this::run, "latchkey-kafka-" + group + "-" + n);
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

    /** The member's consumer group: the lock's topic, or its slot's group. */
    String group() {
        return group;
    }

    void setToken(long token) {
        this.token = token;
    }

    /** Whether the member wrote its grant marker before the commit that confirmed the grant: a lock's does. */
    boolean markedAtGrant() {
        return permits == 0;
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

    /** The permit's slot: its group's partition; 0 for a lock. */
    @Override
    public int slot() {
        return partition.partition();
    }

    /** Whether the member was assigned its partition. */
    boolean granted() {
        return grant.granted();
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

    /** Waits until this member is assigned the partition or {@code untilNanos} passes; see {@link GrantWait#awaitGranted}. */
    boolean awaitGrantedUntil(long untilNanos) throws InterruptedException {
        return grant.awaitGranted(untilNanos);
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
            grant.onJoinStarted(System.nanoTime());
            Duration pollFor = Duration.ofMillis(POLL_MILLIS);
            boolean polled = false;
            while (!stopping || joinUnanswered(c, polled)) {
                long now = System.nanoTime();
                long confirmedSentAt = heartbeats.observe(now);
                try {
                    c.poll(pollFor);
                } catch (WakeupException e) {
                    if (!stopping) {
                        throw e;
                    }
                }
                polled = true;
                generation = c.groupMetadata().generationId();
                memberId = c.groupMetadata().memberId();
                if (unconfirmed && !stopping) {
                    confirmGrant(c); // the commit that followed the assignment failed: once more, still assigned
                }
                if (holding && confirmedSentAt != Long.MIN_VALUE) {
                    heartbeats.confirm(confirmedSentAt);
                }
                if (notGranted) {
                    notGranted = false;
                    if (!holding) {
                        afterRebalanceWithoutGrant(c);
                    }
                }
                if (holding && !unconfirmed && handOff()) {
                    return; // HeldPolls polls the consumer from now on
                }
            }
        } catch (Throwable e) {
            failUnlessReleased(e);
        } finally {
            if (!handedOff && finishing.compareAndSet(false, true)) {
                finish(c);
            }
        }
    }

    /**
     * Hands the consumer of a member that holds over to the backend's {@link HeldPolls}, unless a release began:
     * then this thread goes on until it sees it, and closes the consumer.
     */
    private boolean handOff() {
        synchronized (handOffLock) {
            if (stopping) {
                return false;
            }
            handedOff = true;
        }
        backend.heldPolls().adopt(this);
        return true;
    }

    /**
     * One poll of a member that holds, on {@link HeldPolls}'s thread, as its own thread polled it: a {@code poll} of
     * no time, which runs a rebalance's callbacks (a partition revoked or lost ends the hold there) and the
     * holder's evidence from its heartbeats.
     *
     * <p>A member that stopped (released, left by a semaphore's acquire that kept another slot, lost in a rebalance,
     * or failed) is polled no more, and its consumer is closed once: by a release on the releasing thread (which
     * waits out a poll in progress and then claims it), else on a thread started here, so that the close, which
     * may wait for the broker, holds up no other holder.
     *
     * @return false once it is no longer polled there
     */
    boolean pollHeld() {
        synchronized (pollLock) {
            KafkaConsumer<byte[], byte[]> c = consumer;
            if (!stopping) {
                long confirmedSentAt = heartbeats.observe(System.nanoTime());
                polledBy = Thread.currentThread();
                try {
                    c.poll(Duration.ZERO);
                    generation = c.groupMetadata().generationId();
                    memberId = c.groupMetadata().memberId();
                    if (holding && confirmedSentAt != Long.MIN_VALUE) {
                        heartbeats.confirm(confirmedSentAt);
                    }
                } catch (Throwable e) {
                    failUnlessReleased(e);
                } finally {
                    polledBy = null;
                }
                if (holding && !stopping) {
                    return true;
                }
            }
            if (finishing.compareAndSet(false, true)) {
                Thread t = new Thread(() -> finish(c), thread.getName() + "-leave");
                t.setDaemon(true);
                t.start();
            }
            return false;
        }
    }

    /**
     * Closes the consumer (which leaves the group), confirms the leave of a released holder if in doubt, and
     * ends the member: once, on the thread that claimed {@link #finishing}.
     */
    private void finish(KafkaConsumer<byte[], byte[]> c) {
        try {
            if (c != null) {
                long closing = leave.close(c);
                if (grant.granted() && stopping) {
                    leave.confirm(closing);
                }
            }
        } finally {
            // out of the backend's members before a release waiting in awaitLeft returns: after release() no
            // member of the lease is left (KafkaCostTest#releasedNamesLeaveNoStatePerName)
            backend.removed(this);
            leave.finished();
        }
    }

    /**
     * Reports the grant of the partition assigned to this member once the coordinator has renewed the
     * member's session after the assignment, and dates the holder's first evidence from that renewal: an
     * offset commit of the member's generation, after a lock's grant marker; see {@link GrantConfirmation}.
     * If either fails the member does not hold yet. A failed commit is tried again after each poll while
     * the partition stays assigned (a rebalance that takes it away ends the attempt); a failed marker
     * fails the acquire, which releases the member.
     */
    private void confirmGrant(KafkaConsumer<byte[], byte[]> c) {
        if (confirmation.needsMarker()) {
            if (stopping) {
                return;
            }
            try {
                token = confirmation.mark();
            } catch (RuntimeException e) {
                unconfirmed = false;
                grant.onFailure(e);
                return;
            }
        }
        try {
            if (!confirmation.commit(c, c.groupMetadata().memberId())) {
                return;
            }
        } catch (WakeupException e) {
            if (stopping) {
                return;
            }
            throw e;
        }
        unconfirmed = false;
        holding = true;
        heartbeats.confirm(confirmation.sentAt());
        log.debug("{}: member {} holds partition {} from a commit of generation {}", what, clientId, partition, generation);
        grant.onGranted();
    }

    /**
     * Whether a member that is leaving must poll on first: its first JoinGroup was sent but not answered,
     * for at most a tenth of the timeout after the release began (the answer that names the member is
     * not delayed by the coordinator: one round trip; a member cut off gives up soon). A new member's first JoinGroup makes the
     * coordinator keep it as a pending member and answer with its member id; a consumer closed before that
     * answer sends no LeaveGroup (it has no member id), and the pending member holds up the group's next
     * rebalance until its session ends, a session in which the holder, its JoinGroup pending, hears no
     * heartbeat answer and loses its lease. Once the member id is known, close sends LeaveGroup with it.
     * A semaphore's acquire closes the members of the slots it did not keep at once, often within their
     * first join.
     */
    private boolean joinUnanswered(KafkaConsumer<byte[], byte[]> c, boolean polled) {
        return polled && !stoppedByLoss && c.groupMetadata().memberId().isEmpty()
                && System.nanoTime() - stopRequestedNanos < timeoutNanos / 10;
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

    /** A poll that threw {@code e}: a failure, unless it is the wakeup of a release. */
    private void failUnlessReleased(Throwable e) {
        if (!(e instanceof WakeupException) || !stopping) {
            fail(e);
        }
    }

    private void fail(Throwable e) {
        grant.onFailure(e);
        if (holding) {
            holding = false;
            evidence.lost("polling consumer group '" + group + "' failed: " + e, e);
        } else {
            log.debug("{}: member {} of group '{}' failed", what, clientId, group, e);
        }
    }

    /** Leaves the group (stopping the thread and closing the consumer) and waits for it, bounded. */
    @Override
    public void release() {
        if (!leave() && !stoppedByLoss) {
            return;
        }
        if (Thread.currentThread() == thread || Thread.currentThread() == polledBy) {
            return; // called back from a loss signal in this member's poll: the member ends after it
        }
        if (handedOff) {
            synchronized (pollLock) {
                // a poll in progress on HeldPolls's thread ends (the wakeup) before the consumer is closed here;
                // if that poll saw the release first, its thread closes it and this one waits below
            }
            if (finishing.compareAndSet(false, true)) {
                finish(consumer);
            }
        }
        awaitLeft();
    }

    /**
     * Starts leaving the group: stops the polling thread, which closes the consumer; {@link #awaitLeft}
     * waits for it.
     *
     * @return false if the member was released before
     */
    boolean leave() {
        if (!released.compareAndSet(false, true)) {
            return false;
        }
        stopRequestedNanos = System.nanoTime();
        synchronized (handOffLock) {
            stopping = true; // after this, no hand-off: see handOff
        }
        grant.onRelease();
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
        return true;
    }

    /**
     * Waits until the member has left, bounded.
     *
     * @throws io.latchkey.LockBackendUnavailableException if it did not, or the leave could not be confirmed
     */
    void awaitLeft() {
        try {
            leave.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Runs on the polling thread, inside {@code poll}. */
    private final class Listener implements ConsumerRebalanceListener {

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            generation = consumer.groupMetadata().generationId(); // already that of the rebalance ending here
            memberId = consumer.groupMetadata().memberId();
            if (partitions.contains(partition)) {
                consumer.pause(List.of(partition)); // its records (markers, slot records) are never read here
                log.debug("{}: member {} was assigned partition {}", what, clientId, partition);
                unconfirmed = true;
                confirmation.assigned();
                confirmGrant(consumer);
            } else if (!holding && !unconfirmed) {
                notGranted = true;
            }
            grant.onRebalanceEnded();
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            // still a member: the close that follows sends LeaveGroup, also for a rejoin this poll may send
            end(partitions, LossReasons.revoked(group, partition));
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            if (end(partitions, LossReasons.notCounted(group, partition, heartbeats.kept()))) {
                // It would rejoin in this very poll as a new member: a WakeupException from the callback leaves
                // the poll before that JoinGroup is sent, and the close has no membership left to leave.
                throw new WakeupException();
            }
        }

        /** @return whether this ended the member's hold of the partition, which then is stopped */
        private boolean end(Collection<TopicPartition> partitions, String reason) {
            if (partitions.contains(partition)) {
                unconfirmed = false;
            }
            if (partitions.contains(partition) && holding) {
                holding = false;
                if (!stopping) {
                    stoppedByLoss = true; // a later release waits for the thread alone
                    leave();
                    evidence.lost(reason, null);
                    return true;
                }
            }
            return false;
        }
    }
}
