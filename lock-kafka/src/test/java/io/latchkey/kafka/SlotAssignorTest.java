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

/** The assignment of one slot's group: that slot's partition alone, its owner keeps it, else the earliest waiter. */
class SlotAssignorTest {

    private static final String TOPIC = "latchkey._ssem";

    private static Subscription member(long requestedAt, int permits, int slot, int generation, Integer... owned) {
        ByteBuffer data = ByteBuffer.allocate(SlotAssignor.USER_DATA_BYTES).putLong(requestedAt).putInt(permits).putInt(slot)
                .flip();
        List<TopicPartition> partitions = java.util.Arrays.stream(owned).map(p -> new TopicPartition(TOPIC, p)).toList();
        return new Subscription(List.of(TOPIC), data, partitions, generation, Optional.empty());
    }

    private static Map<String, List<TopicPartition>> assign(Map<String, Subscription> members, int partitions) {
        return SlotAssignor.assign(members, topic -> partitions);
    }

    @Test
    @DisplayName("a free slot goes to the earliest request, and only that slot's partition is handed out")
    void earliestRequestGetsTheSlot() {
        Map<String, Subscription> members = Map.of("late", member(300, 3, 1, -1), "early", member(100, 3, 1, -1),
                "middle", member(200, 3, 1, -1));
        Map<String, List<TopicPartition>> out = assign(members, 3);
        assertThat(out.get("early")).containsExactly(new TopicPartition(TOPIC, 1));
        assertThat(out.get("middle")).isEmpty();
        assertThat(out.get("late")).isEmpty();
    }

    @Test
    @DisplayName("the owner keeps its slot when earlier requests join")
    void ownerKeepsItsSlot() {
        Map<String, Subscription> members = new HashMap<>();
        members.put("owner", member(500, 2, 0, 7, 0));
        members.put("earlier", member(100, 2, 0, 7));
        Map<String, List<TopicPartition>> out = assign(members, 2);
        assertThat(out.get("owner")).containsExactly(new TopicPartition(TOPIC, 0));
        assertThat(out.get("earlier")).isEmpty();
    }

    @Test
    @DisplayName("two claims of the slot: the member of the later generation keeps it, the other gets nothing this round")
    void laterGenerationWinsAClaim() {
        Map<String, Subscription> members = Map.of("zombie", member(1, 2, 1, 3, 1), "owner", member(2, 2, 1, 5, 1),
                "waiter", member(3, 2, 1, 5));
        Map<String, List<TopicPartition>> out = assign(members, 2);
        assertThat(out.get("owner")).containsExactly(new TopicPartition(TOPIC, 1));
        assertThat(out.get("zombie")).isEmpty();
        assertThat(out.get("waiter")).isEmpty();
    }

    @Test
    @DisplayName("a slot beyond the members' number of permits or the topic's partitions is never handed out, owned or not")
    void noSlotBeyondThePermits() {
        assertThat(assign(Map.of("a", member(1, 2, 3, 4, 3), "b", member(2, 2, 3, -1)), 4).values())
                .as("slot 3 of 2 permits").allMatch(List::isEmpty);
        assertThat(assign(Map.of("a", member(1, 4, 3, -1), "b", member(2, 2, 3, -1)), 4).values())
                .as("slot 3 where one member asks for 2 permits").allMatch(List::isEmpty);
        assertThat(assign(Map.of("a", member(1, 4, 3, -1)), 3).values())
                .as("slot 3 of a topic of 3 partitions").allMatch(List::isEmpty);
    }

    @Test
    @DisplayName("a subscription without the slot's user data is never given the slot, nor lets anyone have it")
    void incompleteUserDataHandsOutNothing() {
        Subscription old = new Subscription(List.of(TOPIC), ByteBuffer.allocate(12).putLong(1).putInt(2).flip(), List.of(), -1,
                Optional.empty());
        assertThat(assign(Map.of("old", old, "new", member(2, 2, 0, -1)), 2).values()).allMatch(List::isEmpty);
    }
}
