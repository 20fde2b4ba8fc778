package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import java.util.Properties;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The provider's options are checked before anything connects; bad ones name themselves. */
class KafkaLockProviderTest {

    @Test
    @DisplayName("the kafka scheme is served by this provider, with the broker's default port")
    void scheme() {
        KafkaLockProvider provider = new KafkaLockProvider();

        assertThat(provider.schemes()).containsExactly("kafka");
        assertThat(provider.defaultPort("kafka")).isEqualTo(9092);
        assertThat(provider.backendOptions()).contains("topicPrefix", "replicationFactor", "heartbeat");
    }

    @Test
    @DisplayName("bad option values in the URI are IllegalArgumentExceptions that name the option")
    void badOptions() {
        assertThatThrownBy(() -> LockClient.connect("kafka://localhost:1?topicPrefix=locks:"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("locks:");
        assertThatThrownBy(() -> LockClient.connect("kafka://localhost:1?replicationFactor=0"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replicationFactor");
        assertThatThrownBy(() -> LockClient.connect("kafka://localhost:1?lease=6s&heartbeat=3s"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("heartbeat")
                .hasMessageContaining("third of the lease");
        assertThatThrownBy(() -> LockClient.connect("kafka://localhost:1?partitions=2"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("partitions");
    }

    @Test
    @DisplayName("the properties factory needs bootstrap.servers and refuses unknown options")
    void propertiesFactory() {
        assertThatThrownBy(() -> KafkaLockProvider.newClient(new Properties(), LockOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bootstrap.servers");
        Properties p = new Properties();
        p.put("bootstrap.servers", "localhost:1");
        assertThatThrownBy(() -> KafkaLockProvider.newClient(p, LockOptions.builder().backendOption("nope", "1").build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nope");
    }
}
