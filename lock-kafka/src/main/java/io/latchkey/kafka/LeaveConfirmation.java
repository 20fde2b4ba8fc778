package io.latchkey.kafka;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.spi.Durations;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A member's leaving of its group: the thread that ends the member (its own polling thread, a holder's
 * releasing thread, or after a loss a thread of its own) closes the consumer, which sends
 * LeaveGroup, and confirms the leave if in doubt; {@link GroupMember#release()} waits for both, bounded,
 * and throws what could not be confirmed.
 *
 * <p>The consumer does not say whether its LeaveGroup was answered. A close that ran into its bound,
 * or a member that heard no heartbeat answer for a while, may not have left: then asks the
 * coordinator, within half the timeout, whether this member is gone, and records a failure for
 * {@link GroupMember#release()} if it cannot tell. A release that reached the broker costs nothing more.
 *
 * <p>Thread-safe: one thread closes and confirms, the releasing thread waits on a latch.
 */
final class LeaveConfirmation {

    /** The member's logger: these lines were the member's before the leave had a class of its own. */
    private static final Logger log = LoggerFactory.getLogger(GroupMember.class);

    private final KafkaLockBackend backend;
    private final String lockName;
    private final String group;
    /** "lock 'x'" or "semaphore 'x'", for messages. */
    private final String what;
    private final String clientId;
    private final HeartbeatEvidence heartbeats;
    private final long timeoutNanos;
    private final long heartbeatNanos;
    private final CountDownLatch finished = new CountDownLatch(1);
    /** Set by the polling thread when leaving the group could not be confirmed; thrown by {@link #await()}. */
    private volatile LockBackendUnavailableException leaveFailure;

    LeaveConfirmation(KafkaLockBackend backend, String lockName, String group, String what, String clientId,
            HeartbeatEvidence heartbeats, long heartbeatNanos) {
        this.backend = backend;
        this.lockName = lockName;
        this.group = group;
        this.what = what;
        this.clientId = clientId;
        this.heartbeats = heartbeats;
        this.timeoutNanos = backend.options().timeout().toNanos();
        this.heartbeatNanos = heartbeatNanos;
    }

    /**
     * Closes the member's consumer, which leaves the group, within half the timeout.
     *
     * @return when the close began
     */
    long close(KafkaConsumer<byte[], byte[]> c) {
        long closing = System.nanoTime();
        try {
            // half the timeout for the LeaveGroup, half for confirming it if in doubt: release within the timeout
            c.close(CloseOptions.timeout(Duration.ofNanos(timeoutNanos / 2)));
        } catch (RuntimeException e) {
            log.warn("lock '{}': closing the consumer of group '{}' failed", lockName, group, e);
        }
        return closing;
    }

    /** After a holder's release closed its consumer at {@code closingNanos}: confirms the leave if in doubt. */
    void confirm(long closingNanos) {
        long now = System.nanoTime();
        boolean closeTimedOut = now - closingNanos >= timeoutNanos / 2 - timeoutNanos / 20;
        boolean silent = now - heartbeats.lastAnswerNanos() > 2 * heartbeatNanos + timeoutNanos;
        if (!closeTimedOut && !silent) {
            return;
        }
        try {
            leaveFailure = backend.memberLeft(lockName, group, clientId, timeoutNanos / 2);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The member has ended: its consumer is closed. */
    void finished() {
        finished.countDown();
    }

    /**
     * Waits for the member to end, bounded.
     *
     * @throws LockBackendUnavailableException if it did not end in time, or the leave could not be confirmed
     */
    void await() throws InterruptedException {
        if (!finished.await(2 * timeoutNanos + TimeUnit.MILLISECONDS.toNanos(GroupMember.POLL_MILLIS), TimeUnit.NANOSECONDS)) {
            throw new LockBackendUnavailableException(lockName, "leaving consumer group '" + group + "' of "
                    + what + " did not finish within " + Durations.format(backend.options().timeout().multipliedBy(2))
                    + "; the broker expels the member when its session of " + Durations.format(backend.options().lease())
                    + " expires", null);
        }
        if (leaveFailure != null) {
            throw leaveFailure;
        }
    }
}
