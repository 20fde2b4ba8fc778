package io.latchkey.testkit.kafka;

import com.github.dockerjava.api.command.InspectContainerResponse;
import io.latchkey.testkit.ServerImages;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.function.IntUnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;
import org.testcontainers.images.builder.Transferable;

/**
 * One Kafka node in KRaft combined mode (broker and controller in one process), in a container.
 *
 * <p>Clients reach it on {@link #PORT} published on localhost, which is also what it advertises, so
 * the advertised listener is written once the published port is known (as Testcontainers'
 * {@code KafkaContainer} does). Extra listeners can be advertised at the ports of TCP proxies in
 * front of the node. Brokers and controllers talk to each other on the container network. Not
 * thread-safe.
 */
public final class KafkaNode extends GenericContainer<KafkaNode> {

    /** The image name; built from the kit's Dockerfile and kept, so the layer cache makes later runs fast. */
    public static final String IMAGE = "latchkey-test/kafka:4.3.1";

    /**
     * The system property naming the folder that holds the jars of {@code org.apache.kafka:kafka_2.13}
     * and its run-time dependencies; the image copies them.
     */
    public static final String LIBS_PROPERTY = "latchkey.testkit.kafka.libs";

    /** The port of the listener clients use. */
    public static final int PORT = 9092;

    static final int CONTROLLER_PORT = 9093;
    static final int BROKER_PORT = 9094;
    static final int EXTRA_PORT_BASE = 9100;

    /** The partitions of the offsets topic, unless a node's settings say otherwise. */
    private static final int OFFSETS_PARTITIONS = 6;

    private static final Pattern STARTED = Pattern.compile("Kafka Server started");
    private static volatile ImageFromDockerfile image;

    private final int nodeId;
    private final String alias;
    private final String voters;
    private final String clusterId;
    private final Map<String, String> settings;
    private final List<IntUnaryOperator> proxiedListeners = new ArrayList<>();
    private final Map<String, String> publishedListeners = new LinkedHashMap<>(); // name -> security protocol

    KafkaNode(Network network, int nodeId, String alias, String voters, String clusterId, Map<String, String> settings) {
        super(image());
        this.nodeId = nodeId;
        this.alias = alias;
        this.voters = voters;
        this.clusterId = clusterId;
        this.settings = new LinkedHashMap<>(settings);
        withExposedPorts(PORT);
        withNetwork(network);
        withNetworkAliases(alias);
        waitingFor(Wait.forLogMessage(".*Kafka Server started.*", 1).withStartupTimeout(Duration.ofMinutes(4)));
    }

    /**
     * Adds a listener meant to be reached through a TCP proxy on the host. Once the container runs,
     * {@code proxy} gets the listener's published port, starts a proxy to it and returns the proxy's
     * port on 127.0.0.1, which the node then advertises on that listener, so that a client
     * bootstrapped through the proxy keeps using it. Call before the node starts.
     */
    void addProxiedListener(IntUnaryOperator proxy) {
        addExposedPort(EXTRA_PORT_BASE + proxiedListeners.size());
        proxiedListeners.add(proxy);
    }

    /**
     * Adds a listener clients reach on localhost at its own published port, with its own security
     * protocol ({@code SASL_PLAINTEXT}, {@code SASL_SSL}, {@code SSL}); its settings go into the
     * node's settings under {@code listener.name.<name in lower case>.}. Call before the node starts.
     *
     * @return the listener's port inside the container; {@link #getMappedPort} gives the published one
     */
    int addPublishedListener(String name, String securityProtocol) {
        int port = EXTRA_PORT_BASE + 50 + publishedListeners.size();
        publishedListeners.put(name, securityProtocol);
        addExposedPort(port);
        return port;
    }

    /** The KRaft node id. */
    public int nodeId() {
        return nodeId;
    }

    /** The published host port of the client listener. */
    public int port() {
        return getMappedPort(PORT);
    }

    @Override
    protected void containerIsStarting(InspectContainerResponse containerInfo) {
        StringBuilder listeners = new StringBuilder("EXTERNAL://0.0.0.0:" + PORT + ",BROKER://0.0.0.0:" + BROKER_PORT
                + ",CONTROLLER://0.0.0.0:" + CONTROLLER_PORT);
        StringBuilder advertised = new StringBuilder("EXTERNAL://localhost:" + getMappedPort(PORT) + ",BROKER://" + alias
                + ":" + BROKER_PORT);
        StringBuilder protocols = new StringBuilder("EXTERNAL:PLAINTEXT,BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT");
        for (int i = 0; i < proxiedListeners.size(); i++) {
            String name = "PROXY" + i;
            int proxyPort = proxiedListeners.get(i).applyAsInt(getMappedPort(EXTRA_PORT_BASE + i));
            listeners.append(',').append(name).append("://0.0.0.0:").append(EXTRA_PORT_BASE + i);
            advertised.append(',').append(name).append("://127.0.0.1:").append(proxyPort);
            protocols.append(',').append(name).append(":PLAINTEXT");
        }
        int p = EXTRA_PORT_BASE + 50;
        for (Map.Entry<String, String> l : publishedListeners.entrySet()) {
            listeners.append(',').append(l.getKey()).append("://0.0.0.0:").append(p);
            advertised.append(',').append(l.getKey()).append("://localhost:").append(getMappedPort(p));
            protocols.append(',').append(l.getKey()).append(':').append(l.getValue());
            p++;
        }
        Map<String, String> props = new LinkedHashMap<>();
        props.put("process.roles", "broker,controller");
        props.put("node.id", Integer.toString(nodeId));
        props.put("controller.quorum.voters", voters);
        props.put("listeners", listeners.toString());
        props.put("advertised.listeners", advertised.toString());
        props.put("listener.security.protocol.map", protocols.toString());
        props.put("inter.broker.listener.name", "BROKER");
        props.put("controller.listener.names", "CONTROLLER");
        props.put("log.dirs", "/var/lib/kafka/data");
        props.put("num.partitions", "1");
        props.put("auto.create.topics.enable", "false");
        props.put("group.initial.rebalance.delay.ms", "0");
        props.put("group.min.session.timeout.ms", "1000");
        props.put("offsets.topic.num.partitions", Integer.toString(OFFSETS_PARTITIONS));
        props.putAll(settings);
        StringBuilder file = new StringBuilder();
        props.forEach((k, v) -> file.append(k).append('=').append(v).append('\n'));
        copyFileToContainer(Transferable.of(file.toString()), "/opt/kafka/server.properties");
        copyFileToContainer(Transferable.of(clusterId), "/opt/kafka/cluster.id");
        copyFileToContainer(Transferable.of(script(), 0755), "/opt/kafka/start.sh");
        // last: the image's command waits for it, so that it never runs a start script still being written
        copyFileToContainer(Transferable.of(new byte[0]), "/opt/kafka/ready");
    }

    /**
     * Stops the broker process and lets the container start it again on the same data and ports;
     * returns once it serves again.
     */
    void restartProcess(Duration timeout) {
        int before = startedCount();
        try {
            ExecResult r = execInContainer("sh", "-c", "kill $(cat /opt/kafka/kafka.pid)");
            if (r.getExitCode() != 0) {
                throw new IllegalStateException("could not stop Kafka node " + nodeId + ": " + r.getStderr());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while restarting Kafka node " + nodeId, e);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (startedCount() <= before) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("Kafka node " + nodeId + " did not start again within " + timeout
                        + "; its log ends with:\n" + tail(getLogs(), 3000));
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while restarting Kafka node " + nodeId, e);
            }
        }
    }

    /**
     * Returns once the cluster's group coordinators answer for every partition of the offsets topic. A
     * broker that has just started logs that it serves before it can coordinate a group: it creates the
     * offsets topic on the first request for a coordinator and loads each partition after a restart, and
     * until then answers every group request with a retriable error that clients wait out. A test whose
     * first group request is bounded by a short timeout would otherwise time that creation, not the
     * backend. Asks through this node's client listener, which needs no credentials; the coordinators may
     * be other nodes of the cluster.
     */
    void awaitGroupCoordinators(Duration timeout) {
        int partitions = Integer.parseInt(settings.getOrDefault("offsets.topic.num.partitions",
                Integer.toString(OFFSETS_PARTITIONS)));
        // the admin client waits out the retriable errors of a coordinator not yet there, within its timeout
        DescribeConsumerGroupsOptions within = new DescribeConsumerGroupsOptions().timeoutMs((int) timeout.toMillis());
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:" + port()))) {
            for (Map.Entry<String, KafkaFuture<ConsumerGroupDescription>> group : admin.describeConsumerGroups(
                    groupsOnEveryPartition(partitions), within).describedGroups().entrySet()) {
                try {
                    group.getValue().get();
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof GroupIdNotFoundException)) { // a group nobody joined: answered
                        throw new IllegalStateException("Kafka node " + nodeId + " served, but no group coordinator"
                                + " described group '" + group.getKey() + "' within " + timeout + " (" + e.getCause()
                                + "); its log ends with:\n" + tail(getLogs(), 3000), e.getCause());
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the group coordinators of Kafka node "
                    + nodeId, e);
        }
    }

    /**
     * One group name for each partition of an offsets topic of {@code partitions}, by the brokers' own
     * placement: the group name's hash code, its sign bit cleared, modulo the partitions.
     */
    private static List<String> groupsOnEveryPartition(int partitions) {
        String[] groups = new String[partitions];
        int found = 0;
        for (int i = 0; found < partitions; i++) {
            String group = "latchkey-testkit-coordinator-" + i;
            int p = (group.hashCode() & 0x7fffffff) % partitions;
            if (groups[p] == null) {
                groups[p] = group;
                found++;
            }
        }
        return List.of(groups);
    }

    private int startedCount() {
        Matcher m = STARTED.matcher(getLogs());
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    private static String tail(String s, int n) {
        return s.length() <= n ? s : s.substring(s.length() - n);
    }

    private static String script() {
        try (var in = KafkaNode.class.getResourceAsStream("start.sh")) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static ImageFromDockerfile image() {
        ImageFromDockerfile i = image;
        if (i == null) {
            synchronized (KafkaNode.class) {
                i = image;
                if (i == null) {
                    ServerImages.requireDocker();
                    i = ServerImages.fromDockerfile(IMAGE, "io/latchkey/testkit/kafka/").withFileFromPath("libs", libs());
                    image = i;
                }
            }
        }
        return i;
    }

    private static Path libs() {
        String folder = System.getProperty(LIBS_PROPERTY);
        if (folder == null || folder.isBlank()) {
            throw new IllegalStateException("the Kafka test broker needs -D" + LIBS_PROPERTY + "=<folder with the jars of"
                    + " org.apache.kafka:kafka_2.13 and its run-time dependencies>; lock-kafka's build gathers them");
        }
        Path path = Paths.get(folder.trim());
        try (var files = Files.list(path)) {
            if (files.noneMatch(p -> p.getFileName().toString().startsWith("kafka_2.13-"))) {
                throw new IllegalStateException("-D" + LIBS_PROPERTY + "=" + folder + " holds no kafka_2.13 jar");
            }
        } catch (IOException e) {
            throw new IllegalStateException("-D" + LIBS_PROPERTY + "=" + folder + " is not a readable folder", e);
        }
        return path;
    }
}
