package io.latchkey.testkit.kafka;

import io.latchkey.testkit.LockServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.stream.Collectors;
import org.testcontainers.containers.Network;

/**
 * Three Kafka nodes in KRaft combined mode (each a broker and a voter of the controller quorum), for
 * failover tests: internal topics are replicated three times, so the group coordinator moves to
 * another broker when its node stops. Each node advertises {@code localhost} and its own published
 * port. Not thread-safe; close it at the end.
 */
public final class KafkaCluster implements LockServer {

    /** How long the controller waits for a silent broker before it fences it and moves its leaders. */
    public static final Duration BROKER_SESSION = Duration.ofSeconds(3);

    private static final Duration RESTART_TIMEOUT = Duration.ofMinutes(2);

    private final Network network = Network.newNetwork();
    private final List<KafkaNode> nodes = new ArrayList<>();

    private KafkaCluster(int size) {
        String clusterId = KafkaServer.clusterId();
        String voters = java.util.stream.IntStream.rangeClosed(1, size)
                .mapToObj(i -> i + "@kafka" + i + ":" + KafkaNode.CONTROLLER_PORT).collect(Collectors.joining(","));
        String rf = Integer.toString(Math.min(3, size));
        for (int i = 1; i <= size; i++) {
            nodes.add(new KafkaNode(network, i, "kafka" + i, voters, clusterId, Map.of(
                    "offsets.topic.replication.factor", rf,
                    "transaction.state.log.replication.factor", rf,
                    "transaction.state.log.min.isr", "1",
                    "default.replication.factor", rf,
                    "min.insync.replicas", "1",
                    "broker.heartbeat.interval.ms", "500",
                    "broker.session.timeout.ms", Long.toString(BROKER_SESSION.toMillis()))));
        }
    }

    /**
     * Starts three nodes at once (the quorum needs a majority to start) and returns once all serve, the
     * group coordinators too.
     */
    public static KafkaCluster start() {
        KafkaCluster cluster = new KafkaCluster(3);
        try {
            CompletableFuture.allOf(cluster.nodes.stream()
                    .map(n -> CompletableFuture.runAsync(n::start)).toArray(CompletableFuture[]::new)).join();
            cluster.nodes.get(0).awaitGroupCoordinators(RESTART_TIMEOUT);
        } catch (RuntimeException e) {
            cluster.close();
            throw e instanceof CompletionException && e.getCause() instanceof RuntimeException r ? r : e;
        }
        return cluster;
    }

    /** The bootstrap servers string for Kafka clients: every running node. */
    public String bootstrapServers() {
        return endpoints().stream().map(a -> a.getHostString() + ":" + a.getPort()).collect(Collectors.joining(","));
    }

    /** The node with this KRaft node id (which is also its broker id), 1 to 3. */
    public KafkaNode node(int nodeId) {
        return nodes.get(nodeId - 1);
    }

    /** Stops the node with this id gracefully (controlled shutdown), and removes it. */
    public void stopNode(int nodeId) {
        node(nodeId).stop();
    }

    /**
     * Kills the node with this id without a goodbye (SIGKILL), as a crash of its machine would, and
     * removes it. The controller notices after {@link #BROKER_SESSION}.
     */
    public void killNode(int nodeId) {
        KafkaNode n = node(nodeId);
        n.getDockerClient().killContainerCmd(n.getContainerId()).exec();
        n.stop();
    }

    @Override
    public List<InetSocketAddress> endpoints() {
        return nodes.stream().filter(KafkaNode::isRunning)
                .map(n -> new InetSocketAddress("localhost", n.port())).collect(Collectors.toList());
    }

    @Override
    public String uri(List<InetSocketAddress> endpoints) {
        return KafkaServer.uriOf(endpoints);
    }

    @Override
    public void restart() {
        for (KafkaNode n : nodes) {
            if (n.isRunning()) {
                n.restartProcess(RESTART_TIMEOUT);
            }
        }
        nodes.stream().filter(KafkaNode::isRunning).findFirst().ifPresent(n -> n.awaitGroupCoordinators(RESTART_TIMEOUT));
    }

    @Override
    public void close() {
        try {
            for (KafkaNode n : nodes) {
                try {
                    n.stop();
                } catch (RuntimeException e) {
                    // keep stopping the others
                }
            }
        } finally {
            network.close();
        }
    }
}
