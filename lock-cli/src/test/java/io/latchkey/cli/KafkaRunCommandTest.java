package io.latchkey.cli;

import io.latchkey.testkit.fault.CuttableUri;
import io.latchkey.testkit.kafka.KafkaServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

/**
 * {@code latchkey run} and {@code latchkey elect} against a Kafka broker in a container from the test kit, one broker for the
 * class, at the backend's default heartbeat (a sixth of the lease). Kafka clients follow the listeners
 * the broker advertises, so a cut goes through one of the broker's proxied listeners.
 *
 * <p>The timeout is 2s, not the other backends' 1s: the first run on a new name creates its topic and
 * joins a new group, and a zero {@code --wait} is granted the free lock only if that join ends within
 * the timeout (Kafka's package documentation gives the bound); the lease grows to 4s to stay above
 * timeout plus margin.
 */
@DisplayName("latchkey run and elect on Kafka")
class KafkaRunCommandTest extends RunCommandContract {

    private static final String KAFKA_QUERY = "lease=4s&timeout=2s";
    private static final Duration KAFKA_LEASE = Duration.ofSeconds(4);
    private static KafkaServer kafka;

    @BeforeAll
    static void startServer() throws InterruptedException {
        kafka = KafkaServer.start();
        // The broker's first consumer group creates its offsets topic, a one-time cost of a new broker
        // that a zero --wait on a fresh name must not be charged: one lock taken here pays it.
        try (io.latchkey.LockClient warm = io.latchkey.LockClient.connect(kafka.uri(kafka.endpoints()) + "?" + KAFKA_QUERY)) {
            warm.lock("cli:warm-up").tryLock(Duration.ofSeconds(60)).orElseThrow().close();
        }
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
        return kafka.uri(List.of(endpoint)) + "?" + KAFKA_QUERY;
    }

    @Override
    Duration lease() {
        return KAFKA_LEASE;
    }

    @Override
    boolean offersReadWriteLocks() {
        return false;
    }

    @Override
    CuttableUri newCuttableUri() {
        CuttableUri proxied = kafka.cuttableUri();
        return CuttableUri.of(proxied.uri() + "?" + KAFKA_QUERY, proxied::cut, proxied::restore, proxied::close);
    }

    /** {@code latchkey elect} on the same server. */
    @Nested
    @DisplayName("latchkey elect")
    class Elect extends ElectCommandContract {
        Elect() {
            super(KafkaRunCommandTest.this);
        }
    }

    /** {@code latchkey status} on the same server. */
    @Nested
    @DisplayName("latchkey status")
    class Status extends StatusCommandContract {
        Status() {
            super(KafkaRunCommandTest.this);
        }
    }
}
