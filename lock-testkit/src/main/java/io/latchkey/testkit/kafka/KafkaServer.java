package io.latchkey.testkit.kafka;

import io.latchkey.testkit.LockServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.testcontainers.containers.Network;

/**
 * One Kafka broker (KRaft combined mode) in a container, for the contract and the Kafka tests.
 *
 * <p>The broker has a minimal group rebalance delay of zero and a minimum session timeout of one
 * second, so that tests may use short leases. {@link #restart()} restarts the broker process inside
 * the same container: same data, same published port. Not thread-safe; close it at the end.
 */
public final class KafkaServer implements LockServer {

    private static final Duration RESTART_TIMEOUT = Duration.ofMinutes(2);

    private final Network network;
    private final KafkaNode node;

    private KafkaServer(List<Integer> proxyPorts) {
        network = Network.newNetwork();
        node = new KafkaNode(network, 1, "kafka1", "1@localhost:" + KafkaNode.CONTROLLER_PORT, clusterId(), Map.of(
                "offsets.topic.replication.factor", "1",
                "transaction.state.log.replication.factor", "1",
                "transaction.state.log.min.isr", "1"));
        for (int port : proxyPorts) {
            node.addAdvertisedListener(port);
        }
    }

    /** Builds the image if needed and starts a broker; returns once it serves. */
    public static KafkaServer start() {
        return startWithProxyListeners(List.of());
    }

    /**
     * Starts a broker with one more listener per given host port, each advertised as
     * {@code localhost:<port>}: a TCP proxy on that host port that forwards to
     * {@link #proxyTarget(int)} lets a client reach the broker only through the proxy, even after it
     * follows the advertised listeners.
     */
    public static KafkaServer startWithProxyListeners(List<Integer> proxyPorts) {
        KafkaServer server = new KafkaServer(proxyPorts);
        try {
            server.node.start();
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    /** The published address a proxy for the {@code i}-th proxy listener must forward to. */
    public InetSocketAddress proxyTarget(int i) {
        return new InetSocketAddress("localhost", node.getMappedPort(KafkaNode.EXTRA_PORT_BASE + i));
    }

    /** The bootstrap servers string for Kafka clients. */
    public String bootstrapServers() {
        return "localhost:" + node.port();
    }

    @Override
    public List<InetSocketAddress> endpoints() {
        return List.of(new InetSocketAddress("localhost", node.port()));
    }

    @Override
    public String uri(List<InetSocketAddress> endpoints) {
        return uriOf(endpoints);
    }

    static String uriOf(List<InetSocketAddress> endpoints) {
        return "kafka://" + endpoints.stream().map(a -> a.getHostString() + ":" + a.getPort())
                .collect(Collectors.joining(","));
    }

    @Override
    public void restart() {
        node.restartProcess(RESTART_TIMEOUT);
    }

    @Override
    public void close() {
        try {
            node.stop();
        } finally {
            network.close();
        }
    }

    static String clusterId() {
        UUID u = UUID.randomUUID();
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(16);
        b.putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits());
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b.array());
    }
}
