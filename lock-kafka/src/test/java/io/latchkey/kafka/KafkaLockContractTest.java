package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.LockContract;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.CuttableChild;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.fault.OptionsUri;
import io.latchkey.testkit.kafka.KafkaServer;
import java.net.URI;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;

/** The whole contract of lock-testkit against the Kafka broker {@link KafkaLockTest} uses too. */
class KafkaLockContractTest extends LockContract<KafkaServer> {

    KafkaLockContractTest() {
        super(KafkaLockTest.SERVER_KEY, KafkaServer::start);
    }

    /**
     * The whole contract runs on the default heartbeat (a sixth of the lease); the mutual-exclusion fuzz
     * alone takes a short one: a waiter takes over a released lock at its next heartbeat, and the fuzz
     * hands the lock over 1600 times, which at the default would be a test of the heartbeat's length.
     */
    @Override
    protected LockOptions fuzzOptions() {
        return shortHeartbeat(options());
    }

    /** {@code options} with the 50 ms heartbeat on which a contract's many hand-overs run. */
    static LockOptions shortHeartbeat(LockOptions options) {
        return options.toBuilder().backendOption(KafkaLockProvider.HEARTBEAT, "50ms").build();
    }

    /** Kafka clients follow the broker's advertised listeners: cut them through a proxied listener. */
    @Override
    protected CuttableClient newCuttableClient() {
        return cuttableClient(server(), options());
    }

    /** A client of {@code server} with {@code options}, cut through a proxied listener. */
    static CuttableClient cuttableClient(KafkaServer server, LockOptions options) {
        return server.cuttableClient(uri -> LockClient.connect(URI.create(uri), options));
    }

    /** Children of the randomized faults, too, reach the broker through a proxied listener, cut there. */
    @Override
    protected CuttableChild newCuttableChild() {
        return server().cuttableChild(uri -> ChildHolder.start(OptionsUri.of(uri, options()), childJvmOptions()));
    }

    /** Rule 10 also counts the Kafka clients' own threads (network, heartbeat) as the library's. */
    @Override
    protected boolean isLibraryThread(Thread thread) {
        return super.isLibraryThread(thread) || thread.getName().startsWith("kafka-");
    }

    /** No member of the locks' consumer groups remains (a group may stay, empty, until the broker expires it). */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        assertNoMemberLeft(server(), lockNames);
    }

    /** No member of the consumer groups of {@code lockNames} remains on {@code server}. */
    static void assertNoMemberLeft(KafkaServer server, Collection<String> lockNames) {
        List<String> groups = lockNames.stream().map(n -> TopicNames.topic(KafkaLockProvider.DEFAULT_PREFIX, n))
                .collect(Collectors.toList());
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", server.bootstrapServers()))) {
            Map<String, ConsumerGroupDescription> found = admin.describeConsumerGroups(groups).all().get(30, TimeUnit.SECONDS);
            found.forEach((group, d) -> assertThat(d.members()).as("members of consumer group %s", group).isEmpty());
        } catch (Exception e) {
            throw new AssertionError("describing the consumer groups " + groups + " failed", e);
        }
    }
}
