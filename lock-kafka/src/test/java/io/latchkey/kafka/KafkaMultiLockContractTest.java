package io.latchkey.kafka;

import io.latchkey.LockOptions;
import io.latchkey.testkit.MultiLockContract;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.kafka.KafkaServer;
import java.util.Collection;

/** The whole multi-lock contract against the Kafka broker {@link KafkaLockContractTest} uses. */
class KafkaMultiLockContractTest extends MultiLockContract<KafkaServer> {

    KafkaMultiLockContractTest() {
        super(KafkaLockTest.SERVER_KEY, KafkaServer::start);
    }

    /** As the lock contract's fuzz: the rounds of opposite orders hand names over on a short heartbeat. */
    @Override
    protected LockOptions fuzzOptions() {
        return KafkaLockContractTest.shortHeartbeat(options());
    }

    /** As the lock contract's: through a proxied listener. */
    @Override
    protected CuttableClient newCuttableClient() {
        return KafkaLockContractTest.cuttableClient(server(), options());
    }

    /** As for a single lock: no member of the names' consumer groups remains. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        KafkaLockContractTest.assertNoMemberLeft(server(), lockNames);
    }
}
