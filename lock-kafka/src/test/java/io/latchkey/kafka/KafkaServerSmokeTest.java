package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.kafka.KafkaServer;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;

class KafkaServerSmokeTest {

    @Test
    void brokerServesAndRestarts() throws Exception {
        try (KafkaServer server = KafkaServer.start()) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, server.bootstrapServers()))) {
                assertThat(admin.describeCluster().nodes().get()).hasSize(1);
                server.restart();
                assertThat(admin.describeCluster().nodes().get()).hasSize(1);
            }
        }
    }
}
