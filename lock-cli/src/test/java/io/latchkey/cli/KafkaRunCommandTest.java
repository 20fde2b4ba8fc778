package io.latchkey.cli;

import io.latchkey.testkit.fault.CuttableUri;
import io.latchkey.testkit.kafka.KafkaServer;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

/**
 * {@code latchkey run} against a Kafka broker in a container from the test kit, one broker for the
 * class, at the backend's default heartbeat (a sixth of the lease). Kafka clients follow the listeners
 * the broker advertises, so a cut goes through one of the broker's proxied listeners.
 */
@DisplayName("latchkey run on Kafka")
class KafkaRunCommandTest extends RunCommandContract {

    private static KafkaServer kafka;

    @BeforeAll
    static void startServer() {
        kafka = KafkaServer.start();
    }

    @AfterAll
    static void stopServer() {
        if (kafka != null) {
            kafka.close();
        }
    }

    @Override
    InetSocketAddress server() {
        return kafka.endpoints().get(0);
    }

    @Override
    String uri(InetSocketAddress endpoint) {
        return kafka.uri(List.of(endpoint)) + "?" + QUERY;
    }

    @Override
    CuttableUri newCuttableUri() {
        CuttableUri proxied = kafka.cuttableUri();
        return CuttableUri.of(proxied.uri() + "?" + QUERY, proxied::cut, proxied::restore, proxied::close);
    }
}
