package io.latchkey.kafka;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.GrantRecord;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

/**
 * Who holds a lock now, as its group's coordinator records it ({@code LockBackend.inspect}): two admin
 * requests sent at once, a DESCRIBE of the lock's group and a fetch of its committed offset, both bounded by
 * the timeout. Both only read; neither creates a topic or a group.
 *
 * <p>The holder is the member assigned the lock's partition whose commit confirmed the grant: the committed
 * metadata ({@link GrantMetadata}) names that member's id. A member assigned the partition whose commit has
 * not succeeded yet does not hold (its own acquire has not returned), so the lock then reads as free,
 * though the next moment it may be held. While the group rebalances the coordinator reports its members
 * without their assignments; the committing member then still holds if it is still a member, as the
 * cooperative protocol never takes the partition from a member that stays. (A member that lost its
 * partition while keeping its member id, after a JoinGroup answer lost in the network, reads as holding
 * until the rebalance ends; its own lease has told it of the loss.) The last holder's commit outlives it
 * in the group until the broker expires the offsets; a member id no longer in the group holds nothing.
 *
 * <p>The waiters counted ({@link GrantRecord#waiters()}) are the members the same description lists other
 * than the holder's member id: a waiter that gave up has left with its LeaveGroup, but the member of a
 * client that was killed lingers, and counts, until its session times out (the lease minus one heartbeat
 * interval), and while the group is PreparingRebalance or CompletingRebalance the list may hold members in
 * flux (one whose rejoin is still due, one admitted by its JoinGroup but not yet synced).
 *
 * <p>Thread-safe: the admin client is.
 */
final class KafkaInspection {

    private final Admin admin;
    private final LockOptions options;
    private final String bootstrap;
    private final KafkaErrors errors;

    KafkaInspection(Admin admin, LockOptions options, String bootstrap, KafkaErrors errors) {
        this.admin = admin;
        this.options = options;
        this.bootstrap = bootstrap;
        this.errors = errors;
    }

    /**
     * What the coordinator of {@code group}, lock {@code lockName}'s, records of its grant; empty if
     * nobody holds it.
     *
     * @throws LockBackendUnavailableException if the coordinator did not answer within the timeout
     * @throws LockException if the client may not describe the group or read its offsets
     */
    Optional<GrantRecord> inspect(String lockName, String group) throws InterruptedException {
        return read(lockName, group).map(Held::record);
    }

    /** As {@link #inspect}, with the member id of the holder; for a force release. */
    Optional<Held> read(String lockName, String group) throws InterruptedException {
        Deadline start = Deadline.after(Duration.ZERO);
        Deadline by = Deadline.after(options.timeout());
        int timeoutMs = KafkaLockBackend.millis(options.timeout());
        TopicPartition partition = new TopicPartition(group, 0);
        KafkaFuture<ConsumerGroupDescription> described = admin.describeConsumerGroups(List.of(group),
                new DescribeConsumerGroupsOptions().timeoutMs(timeoutMs)).describedGroups().get(group);
        KafkaFuture<Map<TopicPartition, OffsetAndMetadata>> committed = admin.listConsumerGroupOffsets(
                Map.of(group, new ListConsumerGroupOffsetsSpec().topicPartitions(List.of(partition))),
                new ListConsumerGroupOffsetsOptions().timeoutMs(timeoutMs)).partitionsToOffsetAndMetadata(group);
        ConsumerGroupDescription description;
        OffsetAndMetadata commit;
        try {
            try {
                description = described.get(by.remainingNanos(), TimeUnit.NANOSECONDS);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof GroupIdNotFoundException) {
                    return Optional.empty(); // nobody ever joined, or the broker deleted the emptied group
                }
                throw e;
            }
            if (description.members().isEmpty()) {
                return Optional.empty();
            }
            commit = committed.get(by.remainingNanos(), TimeUnit.NANOSECONDS).get(partition);
        } catch (ExecutionException | TimeoutException e) {
            throw failure(lockName, group, start, KafkaErrors.cause(e));
        }
        return held(description, commit, partition);
    }

    /**
     * The grant that {@code group}'s description and the commit of its lock partition {@code partition}
     * show, as {@link #inspect} reads it: held by the member assigned the partition whose commit
     * confirmed it; empty if nobody holds it. For {@link HeldLocks} too, which describes many groups at once.
     */
    static Optional<Held> held(ConsumerGroupDescription description, OffsetAndMetadata commit, TopicPartition partition) {
        if (description.members().isEmpty()) {
            return Optional.empty();
        }
        String metadata = commit == null ? null : commit.metadata();
        Optional<GrantMetadata> grant = GrantMetadata.parse(metadata);
        if (grant.isPresent()) {
            GrantMetadata g = grant.get();
            Predicate<MemberDescription> holder = m -> m.consumerId().equals(g.memberId());
            return holds(description, partition, holder)
                    ? Optional.of(new Held(new GrantRecord(g.holder(), g.token(),
                            g.sessionMs() >= 0 ? Duration.ofMillis(g.sessionMs()) : null, waiters(description, holder)),
                            g.memberId()))
                    : Optional.empty();
        }
        // a Latchkey before this one committed its member's client id alone: a holder of unknown identity and token
        Predicate<MemberDescription> holder = m -> m.clientId().equals(metadata);
        return metadata != null && !metadata.isEmpty() && holds(description, partition, holder)
                ? Optional.of(new Held(new GrantRecord(null, -1, null, waiters(description, holder)), null))
                : Optional.empty();
    }

    /**
     * The waiters behind the holder that {@code holder} picks out: the members {@code group}'s description
     * lists other than it, whatever the group's state (in a rebalance, the members the coordinator keeps
     * then, some of them in flux).
     */
    private static int waiters(ConsumerGroupDescription group, Predicate<MemberDescription> holder) {
        return (int) group.members().stream().filter(holder.negate()).count();
    }

    /**
     * Whether the member that committed, as {@code committer} picks it out, holds the partition: in a stable
     * group, it is the member assigned the partition; in a rebalancing one, whose members come without their
     * assignments, it is still a member.
     */
    private static boolean holds(ConsumerGroupDescription group, TopicPartition partition, Predicate<MemberDescription> committer) {
        if (group.groupState() == GroupState.STABLE) {
            return group.members().stream().filter(m -> m.assignment().topicPartitions().contains(partition))
                    .anyMatch(committer);
        }
        return group.groupState() != GroupState.EMPTY && group.groupState() != GroupState.DEAD
                && group.members().stream().anyMatch(committer);
    }

    /**
     * A grant the coordinator records.
     *
     * @param record what inspect reports of it
     * @param memberId the holder's member id in the group, or {@code null} if its commit did not name it
     *     (a Latchkey before this one)
     */
    record Held(GrantRecord record, String memberId) {
    }

    private LockException failure(String lockName, String group, Deadline start, Throwable e) {
        LockException refused = errors.authorizationFailure(lockName, "DESCRIBE group '" + group + "' and its offsets"
                + " (inspect who holds the lock)", e);
        if (refused != null) {
            return refused;
        }
        LockException security = errors.securityFailure(lockName, "inspecting consumer group '" + group + "' of lock '"
                + lockName + "'", e);
        if (security != null) {
            return security;
        }
        String paused = KafkaErrors.pausedFor(start, options.timeout());
        return new LockBackendUnavailableException(lockName, "inspecting lock '" + lockName + "': kafka at " + bootstrap
                + (paused != null ? " gave up: " + paused + "; " + e
                        : " did not describe consumer group '" + group + "' within " + Durations.format(options.timeout())
                                + " (" + e + "); check that the brokers run and are reachable"), e);
    }
}
