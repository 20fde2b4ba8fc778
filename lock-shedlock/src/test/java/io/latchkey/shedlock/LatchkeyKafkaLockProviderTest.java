package io.latchkey.shedlock;

import io.latchkey.LockClient;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.kafka.KafkaServer;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ShedLock's provider suite on Kafka, one broker for the class. The timeout is 2s and the lease 4s: a
 * lock without waiting still joins the name's consumer group once, and is granted the free lock only if
 * that join ends within the timeout (lock-kafka's package documentation).
 */
@DisplayName("ShedLock's provider suite on Kafka")
class LatchkeyKafkaLockProviderTest extends ShedLockProviderContract {

    private static final String QUERY = "?lease=4s&timeout=2s";

    @RegisterExtension
    static final SharedServer<KafkaServer> KAFKA = SharedServer.of("kafka", KafkaServer::start);

    /** The broker's first group creates its offsets topic, a one-time cost no test's zero wait must pay. */
    @BeforeAll
    static void warmUp() throws InterruptedException {
        try (LockClient warm = LockClient.connect(KAFKA.get().uri(KAFKA.get().endpoints()) + QUERY)) {
            warm.lock("shedlock:warm-up").tryLock(Duration.ofSeconds(60)).orElseThrow().close();
        }
    }

    /**
     * ShedLock's fuzz tester with fewer grants, for CI's time only: each Kafka grant joins the name's consumer
     * group and each release leaves it, so its 710 grants take about 45 s (they passed so); 17 grants still
     * race eight threads for two names. Redis and ZooKeeper run it whole.
     */
    @Test
    @Override
    public void fuzzTestShouldPass() throws ExecutionException, InterruptedException {
        fuzzWithFewerGrants();
    }

    @Override
    Duration lease() {
        return Duration.ofSeconds(4);
    }

    @Override
    String uri() {
        return KAFKA.get().uri(KAFKA.get().endpoints()) + QUERY;
    }
}
