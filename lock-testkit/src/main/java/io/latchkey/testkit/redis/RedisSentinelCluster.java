package io.latchkey.testkit.redis;

import io.latchkey.testkit.LockServer;
import io.latchkey.testkit.ServerImages;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;

/**
 * A Redis primary, one replica and three sentinels watching them, each in its own container on a
 * private Docker network, for failover tests.
 *
 * <p>Sentinels report the nodes' addresses on that private network, which the test cannot reach:
 * the test reaches every node only through its published port on localhost. {@link #natMap()} is the
 * translation (Redisson's NAT map, the {@code natMap} option of the Redis backend) from each address a
 * sentinel reports to the published one. Sentinels mark a node down after {@link #DOWN_AFTER}.
 *
 * <p>Thread-safety: start and close from one thread; the accessors may be read from any thread.
 */
public final class RedisSentinelCluster implements LockServer {

    /** The master name the sentinels monitor. */
    public static final String MASTER_NAME = "mymaster";

    /** How long sentinels wait before they consider a silent primary down. */
    public static final Duration DOWN_AFTER = Duration.ofSeconds(1);

    /** How long the sentinels give one failover attempt ({@code failover-timeout}). */
    public static final Duration FAILOVER_TIMEOUT = Duration.ofSeconds(10);

    private static final int SENTINEL_PORT = 26379;
    private static final Duration STARTUP = Duration.ofSeconds(90);

    private final Network network = Network.newNetwork();
    private final List<GenericContainer<?>> nodes = new ArrayList<>();
    private final List<GenericContainer<?>> sentinels = new ArrayList<>();
    private GenericContainer<?> primary;

    private RedisSentinelCluster() {
    }

    /** Starts the primary, the replica and the three sentinels, and returns once the sentinels see each other. */
    public static RedisSentinelCluster start() {
        ServerImages.requireDocker();
        RedisSentinelCluster cluster = new RedisSentinelCluster();
        try {
            cluster.startAll();
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    private void startAll() {
        primary = redis(List.of());
        primary.start();
        nodes.add(primary);
        String primaryIp = ip(primary);
        GenericContainer<?> replica = redis(List.of("--replicaof", primaryIp, String.valueOf(RedisServer.PORT)));
        replica.waitingFor(Wait.forLogMessage(".*MASTER <-> REPLICA sync: Finished with success.*\\n", 1)
                .withStartupTimeout(STARTUP));
        replica.start();
        nodes.add(replica);
        String conf = "port " + SENTINEL_PORT + "\n"
                + "dir /data\n"
                + "sentinel monitor " + MASTER_NAME + " " + primaryIp + " " + RedisServer.PORT + " 2\n"
                + "sentinel down-after-milliseconds " + MASTER_NAME + " " + DOWN_AFTER.toMillis() + "\n"
                + "sentinel failover-timeout " + MASTER_NAME + " " + FAILOVER_TIMEOUT.toMillis() + "\n"
                + "sentinel parallel-syncs " + MASTER_NAME + " 1\n";
        for (int i = 0; i < 3; i++) {
            GenericContainer<?> sentinel = new GenericContainer<>(RedisServer.image())
                    .withNetwork(network)
                    .withExposedPorts(SENTINEL_PORT)
                    .withCopyToContainer(Transferable.of(conf.getBytes(StandardCharsets.UTF_8), 0666), "/data/sentinel.conf")
                    .withCommand("latchkey-run", "redis-server", "/data/sentinel.conf", "--sentinel")
                    .waitingFor(Wait.forLogMessage(".*\\+monitor master.*\\n", 1).withStartupTimeout(STARTUP));
            sentinel.start();
            sentinels.add(sentinel);
        }
        // A client asks one sentinel for the others and for the replica: wait until every sentinel knows them.
        long deadline = System.nanoTime() + STARTUP.toNanos();
        for (GenericContainer<?> sentinel : sentinels) {
            while (count(sentinel.getLogs(), "+sentinel sentinel") < 2 || count(sentinel.getLogs(), "+slave slave") < 1) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("sentinels did not discover each other and the replica within "
                            + STARTUP + "; log of " + sentinel.getContainerName() + ":\n" + sentinel.getLogs());
                }
                sleepBriefly();
            }
        }
    }

    private GenericContainer<?> redis(List<String> extraArgs) {
        List<String> command = new ArrayList<>(List.of("latchkey-run", "redis-server", "--port",
                String.valueOf(RedisServer.PORT), "--bind", "0.0.0.0", "--protected-mode", "no", "--dir", "/data",
                "--appendonly", "yes", "--appendfsync", "always"));
        command.addAll(extraArgs);
        return new GenericContainer<>(RedisServer.image())
                .withNetwork(network)
                .withExposedPorts(RedisServer.PORT)
                .withTmpFs(RedisServer.DATA_IN_MEMORY)
                .withCommand(command.toArray(String[]::new))
                .waitingFor(Wait.forLogMessage(".*Ready to accept connections.*\\n", 1).withStartupTimeout(STARTUP));
    }

    /** The sentinels' published addresses. */
    @Override
    public List<InetSocketAddress> endpoints() {
        List<InetSocketAddress> result = new ArrayList<>();
        for (GenericContainer<?> s : sentinels) {
            result.add(InetSocketAddress.createUnresolved(s.getHost(), s.getMappedPort(SENTINEL_PORT)));
        }
        return result;
    }

    /** {@code redis-sentinel://host1:port1,host2:port2,host3:port3/mymaster}; clients also need {@link #natMap()}. */
    @Override
    public String uri(List<InetSocketAddress> endpoints) {
        StringJoiner hosts = new StringJoiner(",");
        for (InetSocketAddress a : endpoints) {
            hosts.add(a.getHostString() + ":" + a.getPort());
        }
        return "redis-sentinel://" + hosts + "/" + MASTER_NAME;
    }

    /**
     * The value of the Redis backend's {@code natMap} option: {@code ip:port=host:port} pairs, comma
     * separated, from each node's and sentinel's address on the private network to its published one.
     */
    public String natMap() {
        StringJoiner map = new StringJoiner(",");
        for (GenericContainer<?> n : nodes) {
            map.add(ip(n) + ":" + RedisServer.PORT + "=" + n.getHost() + ":" + n.getMappedPort(RedisServer.PORT));
        }
        for (GenericContainer<?> s : sentinels) {
            map.add(ip(s) + ":" + SENTINEL_PORT + "=" + s.getHost() + ":" + s.getMappedPort(SENTINEL_PORT));
        }
        return map.toString();
    }

    /** The published address of the node that was primary when the cluster started. */
    public InetSocketAddress primaryEndpoint() {
        return InetSocketAddress.createUnresolved(primary.getHost(), primary.getMappedPort(RedisServer.PORT));
    }

    /** Kills the container of the original primary (SIGKILL: no goodbye to clients or sentinels). */
    public void killPrimary() {
        primary.getDockerClient().killContainerCmd(primary.getContainerId()).exec();
    }

    /** Restarts the process of every node and sentinel, one at a time. */
    @Override
    public void restart() {
        for (GenericContainer<?> n : nodes) {
            RedisServer.restartProcess(n, "Ready to accept connections");
        }
        for (GenericContainer<?> s : sentinels) {
            RedisServer.restartProcess(s, "+monitor master");
        }
    }

    @Override
    public void close() {
        for (GenericContainer<?> c : sentinels) {
            c.stop();
        }
        for (GenericContainer<?> c : nodes) {
            c.stop();
        }
        network.close();
    }

    private static String ip(GenericContainer<?> c) {
        return c.getContainerInfo().getNetworkSettings().getNetworks().values().iterator().next().getIpAddress();
    }

    private static int count(String log, String what) {
        int n = 0;
        for (int i = log.indexOf(what); i >= 0; i = log.indexOf(what, i + what.length())) {
            n++;
        }
        return n;
    }

    private static void sleepBriefly() {
        try {
            Thread.sleep(100); // polling the sentinels' logs, no event to wait on
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting the sentinel cluster", e);
        }
    }
}
