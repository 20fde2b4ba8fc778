package io.latchkey.kafka;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.TopicPartition;

/**
 * The assignment of one slot's group of a semaphore: the group of slot {@code k} hands out partition
 * {@code k} of the semaphore's topic and no other; its owner keeps it, and when it is free it goes to
 * the member that has waited longest. Runs on the group's leader, in the classic protocol.
 */
final class SlotAssignor {

    /** The consumer setting carrying the wall-clock time the member's acquire began, for its subscription. */
    static final String REQUESTED_AT = "latchkey.semaphore.requested.at";
    /** The consumer setting carrying the member's number of permits, for its subscription. */
    static final String PERMITS = "latchkey.semaphore.permits";
    /** The consumer setting carrying the slot whose group the member joins, for its subscription. */
    static final String SLOT = "latchkey.semaphore.slot";
    static final String NAME = "latchkey-slot";
    /** The subscription's user data: the request's time, the number of permits and the slot. */
    static final int USER_DATA_BYTES = Long.BYTES + 2 * Integer.BYTES;

    private SlotAssignor() {
    }

    /**
     * The consumer's assignor: Kafka instantiates it by class from {@code partition.assignment.strategy},
     * so it must be public with a public constructor; it is no API. Each consumer has its own.
     */
    public static final class Strategy implements ConsumerPartitionAssignor, Configurable {

        private long requestedAt;
        private int permits;
        private int slot;

        public Strategy() {
        }

        @Override
        public void configure(Map<String, ?> configs) {
            requestedAt = ((Number) configs.get(REQUESTED_AT)).longValue();
            permits = ((Number) configs.get(PERMITS)).intValue();
            slot = ((Number) configs.get(SLOT)).intValue();
        }

        @Override
        public ByteBuffer subscriptionUserData(Set<String> topics) {
            ByteBuffer b = ByteBuffer.allocate(USER_DATA_BYTES);
            b.putLong(requestedAt).putInt(permits).putInt(slot).flip();
            return b;
        }

        @Override
        public List<RebalanceProtocol> supportedProtocols() {
            // cooperative: the owner keeps its partition through a rebalance instead of giving it up
            // and taking it back, so a holder's permit never lapses because another member joins
            return List.of(RebalanceProtocol.COOPERATIVE);
        }

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public GroupAssignment assign(Cluster metadata, GroupSubscription groupSubscription) {
            Map<String, Subscription> members = groupSubscription.groupSubscription();
            Map<String, List<TopicPartition>> assignment = SlotAssignor.assign(members, topic -> {
                Integer n = metadata.partitionCountForTopic(topic);
                return n == null ? 0 : n;
            });
            Map<String, Assignment> out = new HashMap<>();
            assignment.forEach((member, partitions) -> out.put(member, new Assignment(partitions)));
            return new GroupAssignment(out);
        }
    }

    /**
     * The rules, apart from Kafka's types for tests: the group's slot is the one its members name
     * (the smallest, should they differ); it is handed out only if it lies below every member's number of
     * permits and the topic's partitions, so an operator who adds partitions adds no permits. Its owner
     * keeps it (if two claim it, the member of the later generation: the other was expelled meanwhile);
     * a member claiming a partition it does not keep gets nothing in this rebalance, as the cooperative
     * protocol requires; else the slot goes to the earliest request. Every other member gets nothing.
     */
    static Map<String, List<TopicPartition>> assign(Map<String, ConsumerPartitionAssignor.Subscription> members,
            java.util.function.ToIntFunction<String> partitionCount) {
        Map<String, List<TopicPartition>> result = new TreeMap<>();
        String topic = null;
        int permits = Integer.MAX_VALUE;
        int slot = Integer.MAX_VALUE;
        for (Map.Entry<String, ConsumerPartitionAssignor.Subscription> e : members.entrySet()) {
            result.put(e.getKey(), new ArrayList<>());
            if (topic == null && !e.getValue().topics().isEmpty()) {
                topic = e.getValue().topics().get(0);
            }
            permits = Math.min(permits, permits(e.getValue()));
            slot = Math.min(slot, slot(e.getValue()));
        }
        if (topic == null || slot >= Math.min(permits, partitionCount.applyAsInt(topic))) {
            return result;
        }
        TopicPartition partition = new TopicPartition(topic, slot);
        String owner = null;
        List<String> waiting = new ArrayList<>();
        for (String member : result.keySet()) {
            ConsumerPartitionAssignor.Subscription s = members.get(member);
            if (s.ownedPartitions().isEmpty()) {
                waiting.add(member);
            } else if (s.ownedPartitions().contains(partition)
                    && (owner == null || generation(s) > generation(members.get(owner)))) {
                owner = member;
            }
        }
        if (owner == null && !waiting.isEmpty()) {
            waiting.sort(Comparator.<String>comparingLong(m -> requestedAt(members.get(m))).thenComparing(m -> m));
            owner = waiting.get(0);
        }
        if (owner != null) {
            result.get(owner).add(partition);
        }
        return result;
    }

    private static int generation(ConsumerPartitionAssignor.Subscription s) {
        return s.generationId().orElse(-1);
    }

    private static boolean complete(ConsumerPartitionAssignor.Subscription s) {
        ByteBuffer b = s.userData();
        return b != null && b.remaining() >= USER_DATA_BYTES;
    }

    private static long requestedAt(ConsumerPartitionAssignor.Subscription s) {
        return complete(s) ? s.userData().getLong(s.userData().position()) : Long.MAX_VALUE;
    }

    private static int permits(ConsumerPartitionAssignor.Subscription s) {
        return complete(s) ? s.userData().getInt(s.userData().position() + Long.BYTES) : 0;
    }

    private static int slot(ConsumerPartitionAssignor.Subscription s) {
        return complete(s) ? s.userData().getInt(s.userData().position() + Long.BYTES + Integer.BYTES) : Integer.MAX_VALUE;
    }
}
