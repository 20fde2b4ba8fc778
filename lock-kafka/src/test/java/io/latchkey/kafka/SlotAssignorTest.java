package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The assignment of a semaphore's group: one partition per member at most, owners keep theirs, the earliest waiter first. */
class SlotAssignorTest {

    private static final String TOPIC = "latchkey._ssem";

    private static Subscription member(long requestedAt, int permits, int generation, Integer... owned) {
        ByteBuffer data = ByteBuffer.allocate(12).putLong(requestedAt).putInt(permits).flip();
        List<TopicPartition> partitions = java.util.Arrays.stream(owned).map(p -> new TopicPartition(TOPIC, p)).toList();
        return new Subscription(List.of(TOPIC), data, partitions, generation, Optional.empty());
    }

    private static Map<String, List<TopicPartition>> assign(Map<String, Subscription> members, int partitions) {
        return SlotAssignor.assign(members, topic -> partitions);
    }

    @Test
    @DisplayName("fewer members than partitions: each member gets one partition, never two")
    void onePartitionEach() {
        Map<String, Subscription> members = Map.of("a", member(1, 5, -1), "b", member(2, 5, -1));
        Map<String, List<TopicPartition>> out = assign(members, 5);
        assertThat(out.get("a")).hasSize(1);
        assertThat(out.get("b")).hasSize(1);
        assertThat(out.get("a")).doesNotContainAnyElementsOf(out.get("b"));
    }

    @Test
    @DisplayName("owners keep their partitions when members join; a freed partition goes to the earliest request, the others get none")
    void ownersKeepAndEarliestWaiterGetsTheFreeOne() {
        Map<String, Subscription> members = new HashMap<>();
        members.put("owner0", member(50, 2, 7, 0));
        members.put("late", member(300, 2, -1));
        members.put("early", member(100, 2, 7));
        members.put("middle", member(200, 2, -1));
        Map<String, List<TopicPartition>> out = assign(members, 2);
        assertThat(out.get("owner0")).containsExactly(new TopicPartition(TOPIC, 0));
        assertThat(out.get("early")).containsExactly(new TopicPartition(TOPIC, 1));
        assertThat(out.get("middle")).isEmpty();
        assertThat(out.get("late")).isEmpty();
    }

    @Test
    @DisplayName("two claims of one partition: the member of the later generation keeps it, the other gets nothing this round")
    void laterGenerationWinsAClaim() {
        Map<String, Subscription> members = Map.of("zombie", member(1, 2, 3, 1), "owner", member(2, 2, 5, 1),
                "waiter", member(3, 2, 5));
        Map<String, List<TopicPartition>> out = assign(members, 2);
        assertThat(out.get("owner")).containsExactly(new TopicPartition(TOPIC, 1));
        assertThat(out.get("zombie")).isEmpty();
        assertThat(out.get("waiter")).containsExactly(new TopicPartition(TOPIC, 0));
    }

    @Test
    @DisplayName("partitions beyond the members' number of permits are never handed out, and owned ones there are given up")
    void noSlotBeyondThePermits() {
        Map<String, Subscription> members = Map.of("a", member(1, 2, 4, 3), "b", member(2, 2, -1), "c", member(3, 2, -1),
                "d", member(4, 2, -1));
        Map<String, List<TopicPartition>> out = assign(members, 4);
        assertThat(out.get("a")).isEmpty();
        assertThat(out.get("b")).containsExactly(new TopicPartition(TOPIC, 0));
        assertThat(out.get("c")).containsExactly(new TopicPartition(TOPIC, 1));
        assertThat(out.get("d")).isEmpty();
    }
}
