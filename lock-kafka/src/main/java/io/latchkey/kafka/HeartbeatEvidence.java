package io.latchkey.kafka;

import io.latchkey.spi.LeaseEvidence;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;

/**
 * A member's evidence that the broker still keeps it in the group, from its consumer's heartbeat
 * answers, reported to the lease's {@link LeaseEvidence}.
 *
 * <p>Rule 7: a member cut off from the broker learns it was expelled only when it reconnects
 * (KAFKA-9184), so the holder keeps its own deadline from heartbeat evidence. The broker expels a
 * member no earlier than {@code session.timeout.ms} after the last heartbeat it received (and a
 * member that does not rejoin a rebalance no earlier than {@code max.poll.interval.ms} after it
 * began); every heartbeat answered is therefore reported with a time known to precede its sending.
 * A grant's first evidence is not a heartbeat but the offset commit that follows the assignment
 * ({@code GroupMember#confirmGrant}): the assignment itself does not renew the session.
 * The consumer sends one heartbeat at a time, so heartbeat {@code n+1} leaves after the answer to
 * heartbeat {@code n} arrived, which arrived after the last poll at which the answer count was still
 * below {@code n}: that poll's start time is the bound reported. An answer that told the member it
 * was expelled is never reported: confirmation waits for the next poll, which runs the loss callback
 * first. What remains: the consumer counts a {@code NOT_COORDINATOR} answer like any other, so while
 * the group coordinator moves to another broker one answer may be taken as evidence; the new
 * coordinator gives every member a full session from when it loaded the group, which covers it
 * unless this member stays cut off from the new coordinator for longer than the safety margin.
 *
 * <p>Thread-safe as its member uses it: the thread that polls the member (its own, then {@link HeldPolls}'s,
 * never both at once) observes and confirms; the bounds it keeps are volatile, read from any thread.
 */
final class HeartbeatEvidence {

    private static final String COORDINATOR_METRICS = "consumer-coordinator-metrics";

    private final LeaseEvidence evidence;
    /** How long the broker keeps a silent member: the shorter of the session and the rebalance timeout. */
    private final long ttlNanos;
    /** Before this nanoTime the broker keeps this member in the group; from the last confirmation. */
    private volatile long keptUntilNanos = Long.MIN_VALUE;
    private volatile long lastAnswerNanos = System.nanoTime();
    private Metric answers; // poll thread only, as the three below
    private double lastCount;
    private long lastObservation;
    private long beforeLastChange;

    HeartbeatEvidence(LeaseEvidence evidence, long ttlNanos) {
        this.evidence = evidence;
        this.ttlNanos = ttlNanos;
    }

    /**
     * Starts counting the heartbeat answers of {@code c}, made at {@code created}.
     *
     * @throws IllegalStateException if this kafka-clients version has no heartbeat count
     */
    void start(KafkaConsumer<?, ?> c, long created) {
        answers = metric(c, "heartbeat-total");
        lastCount = 0;
        lastObservation = created;
        beforeLastChange = created;
    }

    /**
     * Counts the heartbeat answers at the start of a poll at {@code now}.
     *
     * @return a time known to precede the sending of the last heartbeat answered since the previous
     *     poll, or {@link Long#MIN_VALUE} if none was
     */
    long observe(long now) {
        double count = value(answers, 0);
        long confirmedSentAt = Long.MIN_VALUE;
        if (count > lastCount) {
            confirmedSentAt = count - lastCount >= 2 ? lastObservation : beforeLastChange;
            beforeLastChange = lastObservation;
            lastCount = count;
            lastAnswerNanos = now;
        }
        lastObservation = now;
        return confirmedSentAt;
    }

    /** Reports that the broker kept the member when a request sent at {@code sentAtNanos} left. */
    void confirm(long sentAtNanos) {
        long until = sentAtNanos + ttlNanos;
        if (keptUntilNanos == Long.MIN_VALUE || until - keptUntilNanos > 0) {
            keptUntilNanos = until;
        }
        evidence.confirmed(sentAtNanos, Duration.ofNanos(ttlNanos));
    }

    /** Whether the broker still keeps the member, from the last confirmation. */
    boolean kept() {
        return System.nanoTime() - keptUntilNanos < 0;
    }

    /** When the member last counted a heartbeat answer (or was made, if it never did). */
    long lastAnswerNanos() {
        return lastAnswerNanos;
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
}
