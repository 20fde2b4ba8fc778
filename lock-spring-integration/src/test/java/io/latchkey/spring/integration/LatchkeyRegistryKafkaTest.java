package io.latchkey.spring.integration;

import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.kafka.KafkaServer;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link RegistryContract} on Kafka, on the module's shared server. */
class LatchkeyRegistryKafkaTest extends RegistryContract {

    @RegisterExtension
    static final SharedServer<KafkaServer> SERVER = SharedServer.of("kafka", KafkaServer::start);

    @Override
    String uri() {
        return SERVER.get().uri(SERVER.get().endpoints()) + "?lease=4s&timeout=2s";
    }

    @Override
    Duration lease() {
        return Duration.ofSeconds(4);
    }
}
