package io.latchkey.kafka;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.GrantRecord;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends another client's grant of a lock ({@code LockBackend.forceRelease}): removes the members of the lock's
 * consumer group with the admin client ({@code Admin.removeMembersFromConsumerGroup}).
 *
 * <p>The admin API names a member to remove by its {@code group.instance.id} alone, which Latchkey's dynamic
 * members have not; only "every member" (KIP-571: the admin client describes the group and sends one
 * LeaveGroup naming each member id) reaches them. So the waiters are removed with the holder. Each learns
 * it at its next heartbeat and joins again as a new member, still waiting; the holder learns it at its next
 * heartbeat too, as a loss ({@link GroupMember} stops instead of joining again), so the waiters' rejoin is a
 * rebalance without it that grants the partition to one of them, whose grant marker, appended after the
 * ended holder's, is a higher token. The coordinator takes the LeaveGroup at once: the lock is free on the
 * broker before this returns.
 *
 * <p>The grant returned is the one read just before the removal, with the waiters inspect counted then (they
 * were removed too, and join again); a holder that took the lock in between
 * (the one read released it meanwhile) loses it too. Thread-safe: the admin client is.
 */
final class ForceRelease {

    private static final Logger log = LoggerFactory.getLogger(KafkaLockBackend.class);

    private final Admin admin;
    private final LockOptions options;
    private final String bootstrap;
    private final KafkaErrors errors;
    private final KafkaInspection inspection;

    ForceRelease(Admin admin, LockOptions options, String bootstrap, KafkaErrors errors, KafkaInspection inspection) {
        this.admin = admin;
        this.options = options;
        this.bootstrap = bootstrap;
        this.errors = errors;
        this.inspection = inspection;
    }

    /**
     * Ends the grant of lock {@code lockName}, whose group is {@code group}: reads it, then removes every
     * member of the group. Nothing is sent beyond the read if nobody holds the lock.
     *
     * @return the grant ended, as inspect read it; empty if nobody held the lock
     * @throws LockBackendUnavailableException if the coordinator did not answer within the timeout
     * @throws LockException if the client may not remove the group's members
     */
    Optional<GrantRecord> forceRelease(String lockName, String group) throws InterruptedException {
        Optional<KafkaInspection.Held> held = inspection.read(lockName, group);
        if (held.isEmpty()) {
            return Optional.empty();
        }
        Deadline start = Deadline.after(Duration.ZERO);
        Deadline by = Deadline.after(options.timeout());
        RemoveMembersFromConsumerGroupOptions all = new RemoveMembersFromConsumerGroupOptions()
                .timeoutMs(KafkaLockBackend.millis(options.timeout()));
        // the coordinator logs it with the removal of each member
        all.reason("latchkey: force release of lock '" + lockName + "'");
        try {
            admin.removeMembersFromConsumerGroup(group, all).all().get(by.remainingNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = KafkaErrors.cause(e);
            // A member that left between the admin client's description and its LeaveGroup (an unknown
            // member id), or a group emptied meanwhile, fails the removal: the grant read is over all the same
            // if its holder is no longer the group's.
            if (!(e instanceof TimeoutException) && ended(lockName, group, held.get())) {
                log.debug("lock '{}': removing the members of consumer group '{}' failed, but its holder left", lockName,
                        group, cause);
                return Optional.of(held.get().record());
            }
            throw failure(lockName, group, start, cause);
        }
        // the shared layer warns of every force release with its holder; this adds how it was done
        log.debug("lock '{}': force-released: removed the members of consumer group '{}' (the grant of token {})", lockName,
                group, held.get().record().token());
        return Optional.of(held.get().record());
    }

    /** Whether the grant {@code held} read is over now: nobody holds the lock, or another member does. */
    private boolean ended(String lockName, String group, KafkaInspection.Held held) throws InterruptedException {
        Optional<KafkaInspection.Held> now = inspection.read(lockName, group);
        return now.isEmpty() || held.memberId() != null && !held.memberId().equals(now.get().memberId());
    }

    private LockException failure(String lockName, String group, Deadline start, Throwable e) {
        LockException refused = errors.authorizationFailure(lockName, "READ group '" + group + "' (remove its members:"
                + " force release)", e);
        if (refused != null) {
            return refused;
        }
        LockException security = errors.securityFailure(lockName, "force-releasing lock '" + lockName + "' (consumer"
                + " group '" + group + "')", e);
        if (security != null) {
            return security;
        }
        String paused = KafkaErrors.pausedFor(start, options.timeout());
        return new LockBackendUnavailableException(lockName, "force-releasing lock '" + lockName + "': kafka at " + bootstrap
                + (paused != null ? " gave up: " + paused + "; " + e
                        : " did not remove the members of consumer group '" + group + "' within "
                                + Durations.format(options.timeout()) + " (" + e + "); the lock may still be held: check"
                                + " that the brokers run and are reachable, and force-release it again"), e);
    }
}
