package io.latchkey.testkit.kafka;

import io.latchkey.LockClient;
import io.latchkey.testkit.LockServer;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.CuttableChild;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.fault.CuttableUri;
import io.latchkey.testkit.fault.TcpProxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.testcontainers.containers.Network;

/**
 * One Kafka broker (KRaft combined mode) in a container, for the contract and the Kafka tests.
 *
 * <p>The broker's group rebalance delay is zero and its minimum session timeout one second, so that
 * tests may use short leases. {@link #restart()} restarts the broker process inside the same
 * container: same data, same published port.
 *
 * <p>Kafka clients follow the listeners a broker advertises, so a TCP proxy in front of the client
 * port alone would be bypassed after the first metadata answer. The broker therefore has a few more
 * listeners, each advertised at the port of a {@link TcpProxy} the fixture starts in front of it;
 * {@link #cuttableClient} connects a client through one of them, and cutting that proxy cuts the
 * client off the broker entirely. Not thread-safe, except {@link #cuttableClient}; close it at the end.
 */
public final class KafkaServer implements LockServer {

    /** How many clients can be cut off at the same time. */
    public static final int PROXIED_LISTENERS = 3;

    private static final Duration RESTART_TIMEOUT = Duration.ofMinutes(2);

    private final Network network;
    private final KafkaNode node;
    private final List<TcpProxy> proxies = new ArrayList<>();
    private final Deque<TcpProxy> freeProxies = new ArrayDeque<>();

    private KafkaServer() {
        network = Network.newNetwork();
        node = new KafkaNode(network, 1, "kafka1", "1@localhost:" + KafkaNode.CONTROLLER_PORT, clusterId(), Map.of(
                "offsets.topic.replication.factor", "1",
                "transaction.state.log.replication.factor", "1",
                "transaction.state.log.min.isr", "1"));
        for (int i = 0; i < PROXIED_LISTENERS; i++) {
            node.addProxiedListener(published -> {
                TcpProxy proxy = TcpProxy.start(new InetSocketAddress("localhost", published));
                synchronized (freeProxies) {
                    proxies.add(proxy);
                    freeProxies.add(proxy);
                }
                return proxy.endpoint().getPort();
            });
        }
    }

    /** Builds the image if needed and starts a broker; returns once it serves, its group coordinators too. */
    public static KafkaServer start() {
        KafkaServer server = new KafkaServer();
        try {
            server.node.start();
            server.node.awaitGroupCoordinators(RESTART_TIMEOUT);
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    /** The bootstrap servers string for Kafka clients. */
    public String bootstrapServers() {
        return "localhost:" + node.port();
    }

    /**
     * A client that reaches the broker only through a TCP proxy, for the network-cut faults.
     *
     * @param connect connects a lock client to the URI it is given
     * @throws IllegalStateException if {@value #PROXIED_LISTENERS} such clients or URIs are open already
     */
    public CuttableClient cuttableClient(Function<String, LockClient> connect) {
        CuttableUri uri = cuttableUri();
        try {
            return CuttableClient.of(connect.apply(uri.uri()), uri::cut, uri::restore, uri);
        } catch (RuntimeException | Error e) {
            uri.close();
            throw e;
        }
    }

    /**
     * A holder in a child JVM that reaches the broker only through a TCP proxy, for the randomized
     * faults; it takes one of the {@value #PROXIED_LISTENERS} proxied listeners, as {@link #cuttableClient} does.
     *
     * @param start starts a child that connects with the URI it is given (the options are the caller's to add)
     * @throws IllegalStateException if {@value #PROXIED_LISTENERS} cuttable clients or children are open already
     */
    public CuttableChild cuttableChild(Function<String, ChildHolder> start) {
        CuttableUri uri = cuttableUri();
        try {
            return CuttableChild.of(start.apply(uri.uri()), uri::cut, uri::restore, uri::close);
        } catch (RuntimeException | Error e) {
            uri.close();
            throw e;
        }
    }

    /**
     * A URI that reaches the broker only through one proxied listener, for clients of other processes
     * (a {@code latchkey run}); cutting it cuts every client that connected with it.
     *
     * @throws IllegalStateException if {@value #PROXIED_LISTENERS} cuttable clients, children or URIs are open already
     */
    public CuttableUri cuttableUri() {
        TcpProxy proxy;
        synchronized (freeProxies) {
            proxy = freeProxies.poll();
        }
        if (proxy == null) {
            throw new IllegalStateException("all " + PROXIED_LISTENERS + " proxied listeners of the Kafka broker are in"
                    + " use; close a cuttable client first");
        }
        TcpProxy taken = proxy;
        return CuttableUri.of(uriOf(List.of(taken.endpoint())), taken::cut, taken::restore, () -> {
            taken.restore();
            synchronized (freeProxies) {
                freeProxies.add(taken);
            }
        });
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

    /** Stops the broker's process (SIGSTOP); the kit's proxies in front of it keep accepting. */
    @Override
    public void pause() {
        io.latchkey.testkit.fault.ContainerPause.pause(node);
    }

    @Override
    public void unpause() {
        io.latchkey.testkit.fault.ContainerPause.unpause(node);
    }

    @Override
    public void restart() {
        node.restartProcess(RESTART_TIMEOUT);
        node.awaitGroupCoordinators(RESTART_TIMEOUT);
    }

    @Override
    public void close() {
        try {
            node.stop();
        } finally {
            synchronized (freeProxies) {
                proxies.forEach(TcpProxy::close);
            }
            network.close();
        }
    }

    /**
     * A random KRaft cluster id. Like Kafka's own {@code Uuid.randomUuid()}, never one whose base64
     * form starts with {@code -}: the storage tool would take it for an option (one id in 64 did).
     */
    static String clusterId() {
        while (true) {
            UUID u = UUID.randomUUID();
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(16);
            b.putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits());
            String id = Base64.getUrlEncoder().withoutPadding().encodeToString(b.array());
            if (!id.startsWith("-")) {
                return id;
            }
        }
    }
}
