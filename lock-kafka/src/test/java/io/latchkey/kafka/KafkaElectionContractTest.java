package io.latchkey.kafka;

import io.latchkey.testkit.ElectionContract;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.kafka.KafkaServer;

/** The whole election contract against the Kafka broker {@link KafkaLockContractTest} uses. */
class KafkaElectionContractTest extends ElectionContract<KafkaServer> {

    KafkaElectionContractTest() {
        super(KafkaLockTest.SERVER_KEY, KafkaServer::start);
    }

    /** As the lock contract's: through a proxied listener. */
    @Override
    protected CuttableClient newCuttableClient() {
        return KafkaLockContractTest.cuttableClient(server(), options());
    }
}
