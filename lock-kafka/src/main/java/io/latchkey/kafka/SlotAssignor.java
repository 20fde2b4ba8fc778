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
 * The assignment of a semaphore's group: each member holds at most one partition (one permit, the
 * slot being the partition), keeps the partition it owns, and a free partition goes to the member that
 * has waited longest. Runs on the group's leader, in the classic protocol.
 */
final class SlotAssignor {

    /** The consumer setting carrying the wall-clock time the member's acquire began, for its subscription. */
    static final String REQUESTED_AT = "latchkey.semaphore.requested.at";
    /** The consumer setting carrying the member's number of permits, for its subscription. */
    static final String PERMITS = "latchkey.semaphore.permits";
    static final String NAME = "latchkey-slots";

    private SlotAssignor() {
    }

    /**
     * The consumer's assignor: Kafka instantiates it by class from {@code partition.assignment.strategy},
     * so it must be public with a public constructor; it is no API. Each consumer has its own.
     */
    public static final class Strategy implements ConsumerPartitionAssignor, Configurable {

        private long requestedAt;
        private int permits;

        public Strategy() {
        }

        @Override
        public void configure(Map<String, ?> configs) {
            requestedAt = ((Number) configs.get(REQUESTED_AT)).longValue();
            permits = ((Number) configs.get(PERMITS)).intValue();
        }

        @Override
        public ByteBuffer subscriptionUserData(Set<String> topics) {
            ByteBuffer b = ByteBuffer.allocate(Long.BYTES + Integer.BYTES);
            b.putLong(requestedAt).putInt(permits).flip();
            return b;
        }

        @Override
        public List<RebalanceProtocol> supportedProtocols() {
            // cooperative: a member keeps its partition through a rebalance instead of giving it up
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
     * The rules, apart from Kafka's types for tests: an owner keeps one partition it owns (if two
     * claim one, the member of the later generation keeps it: the other was expelled meanwhile);
     * partitions owned by nobody go, one each, to the members that own none, the earliest request
     * first. Partitions from the permits of the members on are never handed out, so an operator who
     * adds partitions to the topic adds no permits. A partition still claimed by a member is never
     * given to another in the same rebalance, as the cooperative protocol requires.
     */
    static Map<String, List<TopicPartition>> assign(Map<String, ConsumerPartitionAssignor.Subscription> members,
            java.util.function.ToIntFunction<String> partitionCount) {
        Map<String, List<TopicPartition>> result = new TreeMap<>();
        String topic = null;
        int slots = Integer.MAX_VALUE;
        for (Map.Entry<String, ConsumerPartitionAssignor.Subscription> e : members.entrySet()) {
            result.put(e.getKey(), new ArrayList<>());
            if (topic == null && !e.getValue().topics().isEmpty()) {
                topic = e.getValue().topics().get(0);
            }
            slots = Math.min(slots, permits(e.getValue()));
        }
        if (topic == null) {
            return result;
        }
        slots = Math.min(slots, partitionCount.applyAsInt(topic));
        Map<Integer, String> owner = new HashMap<>();
        Map<String, Boolean> claimed = new HashMap<>();
        for (String member : result.keySet()) {
            ConsumerPartitionAssignor.Subscription s = members.get(member);
            for (TopicPartition tp : s.ownedPartitions()) {
                claimed.put(member, Boolean.TRUE);
                if (!tp.topic().equals(topic) || tp.partition() >= slots || !result.get(member).isEmpty()) {
                    continue;
                }
                String current = owner.get(tp.partition());
                if (current == null || generation(s) > generation(members.get(current))) {
                    if (current != null) {
                        result.get(current).clear();
                    }
                    owner.put(tp.partition(), member);
                    result.get(member).add(tp);
                }
            }
        }
        List<String> waiting = new ArrayList<>();
        for (String member : result.keySet()) {
            if (!claimed.containsKey(member)) {
                waiting.add(member);
            }
        }
        waiting.sort(Comparator.<String>comparingLong(m -> requestedAt(members.get(m))).thenComparing(m -> m));
        int next = 0;
        for (int p = 0; p < slots && next < waiting.size(); p++) {
            if (!owner.containsKey(p)) {
                result.get(waiting.get(next++)).add(new TopicPartition(topic, p));
            }
        }
        return result;
    }

    private static int generation(ConsumerPartitionAssignor.Subscription s) {
        return s.generationId().orElse(-1);
    }

    private static long requestedAt(ConsumerPartitionAssignor.Subscription s) {
        ByteBuffer b = s.userData();
        return b != null && b.remaining() >= Long.BYTES + Integer.BYTES ? b.getLong(b.position()) : Long.MAX_VALUE;
    }

    private static int permits(ConsumerPartitionAssignor.Subscription s) {
        ByteBuffer b = s.userData();
        return b != null && b.remaining() >= Long.BYTES + Integer.BYTES ? b.getInt(b.position() + Long.BYTES)
                : Integer.MAX_VALUE;
    }
}
