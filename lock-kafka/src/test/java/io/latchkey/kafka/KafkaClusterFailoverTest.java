package io.latchkey.kafka;

import io.latchkey.testkit.LinearizableFailoverContract;
import io.latchkey.testkit.kafka.KafkaCluster;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;

/**
 * The kit's failover contract on three Kafka brokers: the broker that coordinates the lock's
 * consumer group is killed while the lock is held and contenders wait. The group lives on the
 * replicated {@code __consumer_offsets} log, so the contract claims linearizable failover.
 */
class KafkaClusterFailoverTest extends LinearizableFailoverContract<KafkaCluster> {

    KafkaClusterFailoverTest() {
        super(KafkaCluster::start);
    }

    /** Kills the broker that coordinates the contract's consumer group. */
    @Override
    protected void failLeader() {
        String prefix = TopicNames.topic(KafkaLockProvider.DEFAULT_PREFIX, "contract:failover:");
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", cluster().bootstrapServers(),
                "request.timeout.ms", 5_000, "default.api.timeout.ms", 10_000))) {
            String group = admin.listGroups().all().get(10, TimeUnit.SECONDS).stream().map(GroupListing::groupId)
                    .filter(g -> g.startsWith(prefix)).findFirst()
                    .orElseThrow(() -> new AssertionError("no consumer group of the failover contract's lock"));
            int coordinator = admin.describeConsumerGroups(List.of(group)).all().get(10, TimeUnit.SECONDS)
                    .get(group).coordinator().id();
            cluster().killNode(coordinator);
        } catch (Exception e) {
            throw new AssertionError("could not kill the group coordinator", e);
        }
    }

    /** The controller fences the killed broker after its session; the new coordinator then loads the group. */
    @Override
    protected Duration failoverTime() {
        return KafkaCluster.BROKER_SESSION.plus(options().timeout());
    }
}
