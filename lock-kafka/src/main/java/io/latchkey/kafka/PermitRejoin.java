package io.latchkey.kafka;

import io.latchkey.LockOptions;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When a permit's holder polls, and so rejoins a rebalance of its group: late, after a delay, and
 * otherwise only when it must, at most {@code KEEP_ALIVE_NANOS} apart, far within
 * {@code max.poll.interval.ms}. A lock's holder rejoins at once and does not use this.
 *
 * <p>The delay: how long a permit's holder keeps heartbeating before it rejoins a rebalance of its group: the
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
 *
 * <p>Not thread-safe: its member's polling thread alone uses it, but for the immutable delay.
 */
final class PermitRejoin {

    /** The member's logger: these lines were the member's before the rejoin had a class of its own. */
    private static final Logger log = LoggerFactory.getLogger(GroupMember.class);
    /** How often a permit's holder polls when nothing else makes it: far within {@code max.poll.interval.ms}. */
    private static final long KEEP_ALIVE_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** "lock 'x'" or "semaphore 'x'", and the member's client id and group, for the log. */
    private final String what;
    private final String clientId;
    private final String topic;
    private final long rejoinDelayNanos;
    private final long keepAliveNanos;
    private long delayFrom;
    private boolean delaying;

    /**
     * @param heartbeatNanos the member's heartbeat interval
     * @param maxPollNanos the member's {@code max.poll.interval.ms}
     */
    PermitRejoin(LockOptions options, long heartbeatNanos, long maxPollNanos, String what, String clientId, String topic) {
        this.what = what;
        this.clientId = clientId;
        this.topic = topic;
        this.rejoinDelayNanos = options.safetyMargin().toNanos() + 3 * heartbeatNanos + options.timeout().toNanos() / 10;
        this.keepAliveNanos = Math.min(KEEP_ALIVE_NANOS, maxPollNanos / 3);
    }

    /** How long a permit's holder keeps heartbeating before it rejoins a rebalance. */
    long delayNanos() {
        return rejoinDelayNanos;
    }

    /**
     * Whether the holder polls at {@code now}: to rejoin, the delay after it heard of a rebalance; to
     * finish a join or run a loss callback; and now and then so that the consumer never counts it
     * stalled. Any poll would rejoin a rebalance at once.
     *
     * @param probe the coordinator's state, read from the member's consumer
     * @param generation the generation the member last saw
     * @param previousPollStart when the member's last poll began
     * @param pollFor how long a poll waits otherwise
     * @return how long this poll waits ({@code pollFor}, or zero when it only keeps the member alive),
     *     or {@code null} for no poll now
     */
    Duration pollFor(GroupMember.RejoinProbe probe, long now, int generation, long previousPollStart, Duration pollFor) {
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
        return pollNow ? pollFor : null;
    }
}
