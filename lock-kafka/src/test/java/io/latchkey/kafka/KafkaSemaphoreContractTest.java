package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.SemaphoreContract;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.kafka.KafkaServer;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

/** The whole semaphore contract of lock-testkit against the Kafka broker {@link KafkaLockContractTest} uses. */
class KafkaSemaphoreContractTest extends SemaphoreContract<KafkaServer> {

    KafkaSemaphoreContractTest() {
        super(KafkaLockTest.SERVER_KEY, KafkaServer::start);
    }

    /** Kafka clients follow the broker's advertised listeners: cut them through a proxied listener. */
    @Override
    protected CuttableClient newCuttableClient() {
        return server().cuttableClient(uri -> LockClient.connect(URI.create(uri), options()));
    }

    /** Rule 10 also counts the Kafka clients' own threads (network, heartbeat) as the library's. */
    @Override
    protected boolean isLibraryThread(Thread thread) {
        return super.isLibraryThread(thread) || thread.getName().startsWith("kafka-");
    }

    /**
     * No member of any slot's consumer group of the semaphores remains (a group may stay, empty, until
     * the broker expires it; the topic stays, as a lock's does, and the token topic's markers).
     */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> semaphoreNames) {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", server().bootstrapServers()))) {
            List<String> topics = semaphoreNames.stream()
                    .map(n -> TopicNames.semaphoreTopic(KafkaLockProvider.DEFAULT_PREFIX, n)).collect(Collectors.toList());
            List<String> groups = new ArrayList<>();
            admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS).forEach((topic, d) -> {
                for (int slot = 0; slot < d.partitions().size(); slot++) {
                    groups.add(TopicNames.slotGroup(topic, slot));
                }
            });
            admin.describeConsumerGroups(groups).describedGroups().forEach((group, described) -> {
                try {
                    assertThat(described.get(30, TimeUnit.SECONDS).members()).as("members of consumer group %s", group).isEmpty();
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof GroupIdNotFoundException)) { // no member ever joined that slot
                        throw new AssertionError("describing consumer group " + group + " failed", e);
                    }
                } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
                    throw new AssertionError("describing consumer group " + group + " failed", e);
                }
            });
        } catch (Exception e) {
            throw new AssertionError("describing the slot groups of " + semaphoreNames + " failed", e);
        }
    }
}
