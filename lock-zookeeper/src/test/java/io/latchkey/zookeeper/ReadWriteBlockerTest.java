package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Which node a read or write request waits for, on children named as Curator's read-write lock names them. */
class ReadWriteBlockerTest {

    private static final String R1 = "_c_1b0e-__READ__0000000001";
    private static final String W2 = "_c_2c1f-__WRIT__0000000002";
    private static final String R3 = "_c_3d20-__READ__0000000003";
    private static final String W4 = "_c_4e31-__WRIT__0000000004";
    private static final String R5 = "_c_5f42-__READ__0000000005";
    // ZooKeeper lists children in no particular order; a node without a marker is no part of the queue
    private static final List<String> CHILDREN = List.of(R5, W2, R1, W4, R3, "other");

    @Test
    @DisplayName("a read waits for the nearest write before it, and for no read")
    void readWaitsForTheNearestEarlierWrite() {
        assertThat(Acquisition.blocker(CHILDREN, R1, false)).isNull();
        assertThat(Acquisition.blocker(CHILDREN, R3, false)).isEqualTo(W2);
        assertThat(Acquisition.blocker(CHILDREN, R5, false)).isEqualTo(W4);
        assertThat(Acquisition.blocker(List.of(R1, R3, R5), R5, false)).as("readers only").isNull();
    }

    @Test
    @DisplayName("a write waits for the nearest node before it, of either mode")
    void writeWaitsForTheNearestEarlierNode() {
        assertThat(Acquisition.blocker(CHILDREN, W2, true)).isEqualTo(R1);
        assertThat(Acquisition.blocker(CHILDREN, W4, true)).isEqualTo(R3);
        assertThat(Acquisition.blocker(List.of(W4, "other"), W4, true)).as("alone").isNull();
    }

    @Test
    @DisplayName("nodes are ordered by the sequence after their marker, not by their random prefix")
    void orderedBySequence() {
        assertThat(Acquisition.modeSequence(W2)).isEqualTo("0000000002");
        assertThat(Acquisition.modeSequence("other")).isNull();
        String lateButLowPrefix = "_c_0000-__WRIT__0000000009";
        assertThat(Acquisition.blocker(List.of(lateButLowPrefix, R5), R5, false)).as("a write queued after the read")
                .isNull();
    }
}
