package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.spi.LockUri;
import java.util.Properties;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The provider's options are checked before anything connects; bad ones name themselves. */
class KafkaLockProviderTest {

    @Test
    @DisplayName("the kafka scheme is served by this provider, with the broker's default port")
    void scheme() {
        KafkaLockProvider provider = new KafkaLockProvider();

        assertThat(provider.schemes()).containsExactlyInAnyOrder("kafka", "kafkas");
        assertThat(provider.defaultPort("kafka")).isEqualTo(9092);
        assertThat(provider.backendOptions()).contains("topicPrefix", "replicationFactor", "heartbeat", "handover");
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
        assertThatThrownBy(() -> LockClient.connect("kafka://localhost:1?handover=fast"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("handover")
                .hasMessageContaining("'fast'").hasMessageContaining("rejoin");
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

    @Test
    @DisplayName("a lease not longer than timeout plus safetyMargin is refused before connecting, quoting the three")
    void leaseMustExceedTimeoutAndMargin() {
        assertThatThrownBy(() -> LockClient.connect("kafka://localhost:1?lease=5s&timeout=5s"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lease=5s for lock URI 'kafka://localhost:1?lease=5s&timeout=5s' must be longer than timeout=5s"
                        + " plus safetyMargin=500ms (5500ms), so that a renewal answered within the timeout still finds the"
                        + " lease valid; lengthen the lease or shorten the timeout");
    }

    @Test
    @DisplayName("sasl needs credentials and a known mechanism; sslTruststore needs kafkas:// and a readable file")
    void securityOptions() {
        assertThatThrownBy(() -> LockClient.connect("kafka://localhost:1?sasl=SCRAM-SHA-512"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs a user name and password");
        assertThatThrownBy(() -> LockClient.connect("kafka://u:secret@localhost:1?sasl=GSSAPI"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("GSSAPI")
                .hasMessageContaining("SCRAM-SHA-256").hasMessageNotContaining("secret");
        assertThatThrownBy(() -> LockClient.connect("kafka://localhost:1?sslTruststore=/nowhere/ca.pem"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("kafkas://");
        assertThatThrownBy(() -> LockClient.connect("kafkas://localhost:1?sslTruststore=/nowhere/ca.pem"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("/nowhere/ca.pem");
    }

    @Test
    @DisplayName("the URI selects the security protocol and the SASL mechanism")
    void uriSelectsSecurity() {
        KafkaLockProvider provider = new KafkaLockProvider();
        LockUri.Parsed plain = LockUri.parse("kafka://h:9092", LockOptions.defaults(), provider);
        assertThat(KafkaLockProvider.securityConfig(plain.uri(), plain.options())).containsEntry("security.protocol", "PLAINTEXT");
        LockUri.Parsed scram = LockUri.parse("kafkas://alice:pw@h:9092?sasl=scram-sha-512", LockOptions.defaults(), provider);
        assertThat(KafkaLockProvider.securityConfig(scram.uri(), scram.options()))
                .containsEntry("security.protocol", "SASL_SSL").containsEntry("sasl.mechanism", "SCRAM-SHA-512")
                .hasEntrySatisfying("sasl.jaas.config", v -> assertThat(v.toString()).contains("ScramLoginModule")
                        .contains("username=\"alice\""));
        LockUri.Parsed sasl = LockUri.parse("kafka://alice:pw@h:9092", LockOptions.defaults(), provider);
        assertThat(KafkaLockProvider.securityConfig(sasl.uri(), sasl.options()))
                .containsEntry("security.protocol", "SASL_PLAINTEXT").containsEntry("sasl.mechanism", "PLAIN");
    }
}
