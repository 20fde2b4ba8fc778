package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.kafka.KafkaServer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.internals.Topic;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The kit's broker serves groups once {@link KafkaServer#start()} returns. A broker creates its offsets
 * topic only when a client first asks for a group's coordinator and answers group requests with a
 * retriable error until it has; the first inspect of a test with a two-second timeout once spent those
 * seconds there, on a loaded machine. Started here, not shared: a shared broker has its topic from the
 * classes before.
 */
class KafkaServerReadyTest {

    @Test
    @DisplayName("a started broker has its offsets topic, with a leader on every partition, before any client asked for a coordinator")
    void offsetsTopicIsThereOnceTheBrokerStarted() throws Exception {
        try (KafkaServer server = KafkaServer.start();
                Admin admin = Admin.create(Map.of("bootstrap.servers", server.bootstrapServers()))) {
            TopicDescription offsets = admin.describeTopics(List.of(Topic.GROUP_METADATA_TOPIC_NAME)).allTopicNames()
                    .get(30, TimeUnit.SECONDS).get(Topic.GROUP_METADATA_TOPIC_NAME);
            assertThat(offsets.partitions()).as("partitions of %s", Topic.GROUP_METADATA_TOPIC_NAME).isNotEmpty()
                    .allSatisfy(p -> assertThat(p.leader()).as("leader of partition %d", p.partition()).isNotNull());
        }
    }
}
