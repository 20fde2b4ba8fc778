package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;

/**
 * A semaphore's holders rejoin a rebalance late by reading two facts of kafka-clients' classic
 * coordinator that its API does not give (a rejoin pending, the generation it is stable in). Without
 * them a holder falls back to rejoining at once, with a WARN, and may signal a loss while another
 * member is silent; this test fails instead, on the kafka-clients the build resolves, so that an
 * upgrade that renames them is caught here rather than in a flaky semaphore contract.
 */
class RejoinProbeTest {

    @Test
    void readsTheClassicCoordinatorOfTheKafkaClientsInUse() {
        Map<String, Object> config = Map.of("bootstrap.servers", "127.0.0.1:1", "group.id", "latchkey-probe-test",
                "group.protocol", "classic", "key.deserializer", ByteArrayDeserializer.class,
                "value.deserializer", ByteArrayDeserializer.class);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
            consumer.subscribe(List.of("latchkey-probe-test")); // sends nothing until the first poll
            GroupMember.RejoinProbe probe = GroupMember.RejoinProbe.of(consumer, "probe");
            assertThat(probe).as("the coordinator's rejoin state is readable").isNotNull();
            // a subscribed member that never joined needs to join, and is stable in no generation
            assertThat(probe.rejoinNeededOrPending()).isTrue();
            assertThat(probe.stableGeneration()).isEqualTo(-1);
        }
    }
}
