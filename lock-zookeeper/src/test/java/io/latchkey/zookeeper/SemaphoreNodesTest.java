package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.LockException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** What a semaphore node's children and data say, without a server. */
class SemaphoreNodesTest {

    private static final List<String> CHILDREN = List.of("slot-2", "_c_b1-wait-0000000012", "slot-0",
            "_c_a7-wait-0000000003", "_c_c3-wait-0000000010", "slot-x");

    @Test
    @DisplayName("waiters in sequence order whatever their uuids, slots by number, other children ignored")
    void waitersAndSlots() {
        assertThat(SemaphoreNodes.waiters(CHILDREN))
                .containsExactly("_c_a7-wait-0000000003", "_c_c3-wait-0000000010", "_c_b1-wait-0000000012");
        assertThat(SemaphoreNodes.slots(CHILDREN)).containsExactlyInAnyOrder(0, 2);
        assertThat(SemaphoreNodes.sequence("slot-1")).isNull();
    }

    @Test
    @DisplayName("a slot's data: the waiter's name, then the holder text on its own line; an older slot's, the name only")
    void slotData() {
        String holder = "owner=web-1 started=2026-12-05T07:30:00Z thread=main at=2026-12-05T07:31:00Z";
        byte[] data = SemaphoreNodes.slotData("_c_a7-wait-0000000003", holder);
        assertThat(SemaphoreNodes.slotWaiter(data)).isEqualTo("_c_a7-wait-0000000003");
        assertThat(SemaphoreNodes.slotHolder(data)).isEqualTo(holder);
        byte[] older = "_c_a7-wait-0000000003".getBytes(StandardCharsets.UTF_8);
        assertThat(SemaphoreNodes.slotWaiter(older)).isEqualTo("_c_a7-wait-0000000003");
        assertThat(SemaphoreNodes.slotHolder(older)).isNull();
    }

    @Test
    @DisplayName("the number of permits is the node's data in decimal; anything else names the node and the semaphore")
    void permitsFromData() {
        assertThat(SemaphoreNodes.permits("3".getBytes(StandardCharsets.UTF_8), "jobs", "semaphore 'jobs'", "/p")).isEqualTo(3);
        assertThatThrownBy(() -> SemaphoreNodes.permits(new byte[0], "jobs", "semaphore 'jobs'", "/latchkey/@semaphores/jobs"))
                .isInstanceOf(LockException.class).hasMessageContaining("/latchkey/@semaphores/jobs")
                .hasMessageContaining("semaphore 'jobs'");
    }
}
