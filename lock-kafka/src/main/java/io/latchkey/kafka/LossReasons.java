package io.latchkey.kafka;

import org.apache.kafka.common.TopicPartition;

/**
 * Why a {@link GroupMember} lost the partition it held, for the loss signal (the shared layer puts the lock's
 * name and topic before it).
 */
final class LossReasons {

    private LossReasons() {
    }

    /** A rebalance gave the partition to another member: a semaphore slot's later claim won. */
    static String revoked(String group, TopicPartition partition) {
        return "partition " + partition + " was revoked in a rebalance of consumer group '" + group + "'";
    }

    /**
     * The coordinator no longer counts the member: a heartbeat or commit was answered with an unknown member
     * id or an old generation. A member whose session had not expired by its own heartbeat evidence
     * ({@code kept}) cannot have been expelled for silence: another client sent a LeaveGroup naming it, which
     * is what a force release does (or any admin client's {@code removeMembersFromConsumerGroup}).
     */
    static String notCounted(String group, TopicPartition partition, boolean kept) {
        return kept
                ? "this member was removed from consumer group '" + group + "' while its session was still running"
                        + " (the lock was force-released, or an administrator removed the group's members), so partition "
                        + partition + " is lost"
                : "the coordinator of consumer group '" + group + "' no longer counts this member (its session expired,"
                        + " it was fenced or the group was reset), so partition " + partition + " is lost";
    }
}
