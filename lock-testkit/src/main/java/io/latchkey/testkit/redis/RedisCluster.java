package io.latchkey.testkit.redis;

import io.latchkey.testkit.LockServer;
import io.latchkey.testkit.ServerImages;
import io.latchkey.testkit.fault.ContainerPause;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;

/**
 * A Redis Cluster of three primaries with one replica each: six {@code redis-server} processes
 * (Debian bookworm's Redis 7.0) in one container, reached from the test on localhost.
 *
 * <p>Cluster clients follow the addresses the nodes announce ({@code CLUSTER SLOTS}, {@code MOVED}),
 * so every node listens inside the container on a port that was free on the host, the container
 * publishes it on the same host port number, and every node announces {@code 127.0.0.1}: what a node
 * announces is what the test reaches, without address translation. This needs the Docker engine on
 * the test's own machine. The cluster bus stays inside the container (ports 17001 to 17006).
 *
 * <p>{@link #restart()} is a rolling restart of the six processes, each primary handing its slots to
 * its replica first, as clusters are restarted in practice.
 *
 * <p>Two kinds: {@link #start()}, whose replicas never take over on their own (the node timeout is
 * long and {@code cluster-replica-no-failover} is set), so that restarts and pauses of the contract
 * never turn into failovers; and {@link #startWithFailover()}, whose replicas take over a silent
 * primary after {@link #FAILOVER_NODE_TIMEOUT}. Every node keeps an append-only file fsynced on every
 * write, so a restart keeps every key, fencing counters included.
 *
 * <p>Thread-safety: start and close from one thread; the accessors may be read from any thread.
 */
public final class RedisCluster implements LockServer {

    /** The number of nodes: three primaries, each with one replica. */
    public static final int NODES = 6;

    /** The node timeout of {@link #startWithFailover()}: how long a primary may be silent before its replica takes over. */
    public static final Duration FAILOVER_NODE_TIMEOUT = Duration.ofSeconds(3);

    /** The node timeout of {@link #start()}: longer than any pause of the contract, so nothing is ever marked failed. */
    static final Duration CONTRACT_NODE_TIMEOUT = Duration.ofSeconds(60);

    private static final String SCRIPT = "/usr/local/bin/latchkey-cluster";
    private static final String READY = "latchkey-cluster: ready";
    private static final Duration STARTUP = Duration.ofSeconds(120);
    private static final int PORT_ATTEMPTS = 3;

    private final GenericContainer<?> container;
    private final List<Integer> ports;

    private RedisCluster(List<Integer> ports, Duration nodeTimeout, boolean failover) {
        this.ports = List.copyOf(ports);
        List<String> command = new ArrayList<>(List.of("sh", SCRIPT, String.valueOf(nodeTimeout.toMillis()),
                failover ? "yes" : "no"));
        List<String> bindings = new ArrayList<>();
        for (int p : ports) {
            command.add(String.valueOf(p));
            bindings.add(p + ":" + p);
        }
        byte[] script;
        try (var in = RedisCluster.class.getResourceAsStream("latchkey-cluster")) {
            script = in.readAllBytes();
        } catch (IOException | NullPointerException e) {
            throw new IllegalStateException("the kit's resource io/latchkey/testkit/redis/latchkey-cluster is missing", e);
        }
        this.container = new GenericContainer<>(RedisServer.image())
                .withCopyToContainer(Transferable.of(script, 0755), SCRIPT)
                .withTmpFs(RedisServer.DATA_IN_MEMORY)
                .withCommand(command.toArray(String[]::new))
                .waitingFor(Wait.forLogMessage(".*" + READY + ".*\\n", 1).withStartupTimeout(STARTUP));
        this.container.setPortBindings(bindings);
    }

    /** Starts a cluster whose replicas never take over on their own; returns once every slot is served. */
    public static RedisCluster start() {
        return start(CONTRACT_NODE_TIMEOUT, false);
    }

    /** Starts a cluster whose replicas take over a primary silent for {@link #FAILOVER_NODE_TIMEOUT}. */
    public static RedisCluster startWithFailover() {
        return start(FAILOVER_NODE_TIMEOUT, true);
    }

    private static RedisCluster start(Duration nodeTimeout, boolean failover) {
        ServerImages.requireDocker();
        RuntimeException last = null;
        // the host ports are chosen free before the container takes them: another process may take one between
        for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
            RedisCluster cluster = new RedisCluster(freePorts(), nodeTimeout, failover);
            try {
                cluster.container.start();
                return cluster;
            } catch (RuntimeException e) {
                cluster.close();
                last = e;
            }
        }
        throw last;
    }

    private static List<Integer> freePorts() {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            List<Integer> result = new ArrayList<>();
            while (result.size() < NODES) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                sockets.add(s);
                if (s.getLocalPort() < 17001 || s.getLocalPort() > 17000 + NODES) { // not a bus port of the container
                    result.add(s.getLocalPort());
                }
            }
            return result;
        } catch (IOException e) {
            throw new UncheckedIOException("no free local ports for a Redis cluster", e);
        } finally {
            for (ServerSocket s : sockets) {
                try {
                    s.close();
                } catch (IOException e) {
                    // it was only held to keep the ports distinct
                }
            }
        }
    }

    /** The six nodes' addresses, as they announce them, in a stable order (which of them are primaries may change). */
    @Override
    public List<InetSocketAddress> endpoints() {
        List<InetSocketAddress> result = new ArrayList<>();
        for (int p : ports) {
            result.add(InetSocketAddress.createUnresolved("127.0.0.1", p));
        }
        return result;
    }

    /** {@code redis-cluster://host1:port1,...}: the seed nodes; the client learns the others from them. */
    @Override
    public String uri(List<InetSocketAddress> endpoints) {
        StringJoiner hosts = new StringJoiner(",");
        for (InetSocketAddress a : endpoints) {
            hosts.add(a.getHostString() + ":" + a.getPort());
        }
        return "redis-cluster://" + hosts;
    }

    /** The port of every node, in the order of {@link #endpoints()}. */
    public List<Integer> ports() {
        return ports;
    }

    /** The hash slot of {@code key}, as the cluster computes it ({@code CLUSTER KEYSLOT}). */
    public int keySlot(String key) {
        return Integer.parseInt(cli(ports.get(0), "CLUSTER", "KEYSLOT", key));
    }

    /** The port of the primary that serves {@code slot} now, as the first node that answers sees it. */
    public int primaryOf(int slot) {
        for (int p : ports) {
            String out;
            try {
                out = cli(p, "CLUSTER", "NODES");
            } catch (IllegalStateException e) {
                continue; // a dead node
            }
            for (String line : out.split("\n")) {
                String[] f = line.trim().split(" ");
                List<String> flags = List.of(f.length > 2 ? f[2].split(",") : new String[0]);
                if (f.length < 9 || !flags.contains("master") || flags.contains("fail") || flags.contains("fail?")) {
                    continue;
                }
                for (int i = 8; i < f.length; i++) {
                    String range = f[i];
                    if (range.startsWith("[")) {
                        continue; // a slot being migrated or imported, listed besides its owner's ranges
                    }
                    String[] bounds = range.split("-");
                    int from = Integer.parseInt(bounds[0]);
                    int to = bounds.length == 2 ? Integer.parseInt(bounds[1]) : from;
                    if (slot >= from && slot <= to) {
                        return Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1, f[1].indexOf('@')));
                    }
                }
            }
        }
        throw new IllegalStateException("no node of the cluster names a primary for slot " + slot);
    }

    /** The node id ({@code CLUSTER MYID}) of the node on {@code port}. */
    public String nodeId(int port) {
        return cli(port, "CLUSTER", "MYID");
    }

    /** The port of the live replica of the primary on {@code primaryPort}. */
    public int replicaOf(int primaryPort) {
        for (int p : ports) {
            try {
                String info = cli(p, "INFO", "replication");
                if (info.contains("role:slave") && info.lines().map(String::trim)
                        .anyMatch(("master_port:" + primaryPort)::equals)) {
                    return p;
                }
            } catch (IllegalStateException e) {
                // a dead node is no replica
            }
        }
        throw new IllegalStateException("no live replica follows the primary on port " + primaryPort);
    }

    /** The ports of the nodes that are primaries now. */
    public List<Integer> primaries() {
        List<Integer> result = new ArrayList<>();
        for (int p : ports) {
            try {
                if (cli(p, "ROLE").startsWith("master")) {
                    result.add(p);
                }
            } catch (IllegalStateException e) {
                // a dead node is no primary
            }
        }
        return result;
    }

    /** The port of the live primary that holds a key matching {@code pattern}, which exactly one must hold. */
    public int primaryHolding(String pattern) {
        List<Integer> found = new ArrayList<>();
        for (int p : primaries()) {
            if (!cli(p, "KEYS", pattern).isBlank()) {
                found.add(p);
            }
        }
        if (found.size() != 1) {
            throw new IllegalStateException("expected exactly one primary to hold keys matching '" + pattern + "', found "
                    + found);
        }
        return found.get(0);
    }

    /**
     * Kills the node on {@code port} with SIGKILL (no goodbye to clients or the other nodes); it stays
     * dead for the rest of the cluster's life.
     */
    public void killNode(int port) {
        exec("touch /data/" + port + "/down && kill -KILL $(cat /data/" + port + "/pid)", "kill node " + port);
    }

    /**
     * Runs {@code redis-cli -p port args...} inside the container and returns its output; a test's
     * view behind the client's back. {@code redis-cli} exits 0 on a Redis error reply: the output then
     * holds the error.
     */
    public String cli(int port, String... args) {
        List<String> command = new ArrayList<>(List.of("redis-cli", "-p", String.valueOf(port)));
        command.addAll(List.of(args));
        return run(command, "redis-cli -p " + port + " " + List.of(args));
    }

    /** As {@link #cli}, following redirections to the node that serves the key ({@code redis-cli -c}). */
    public String cliFollowing(String... args) {
        List<String> command = new ArrayList<>(List.of("redis-cli", "-c", "-p", String.valueOf(ports.get(0))));
        command.addAll(List.of(args));
        return run(command, "redis-cli -c " + List.of(args));
    }

    private String run(List<String> command, String what) {
        try {
            var result = container.execInContainer(StandardCharsets.UTF_8, command.toArray(String[]::new));
            if (result.getExitCode() != 0) {
                throw new IllegalStateException(what + " failed: " + result.getStdout() + result.getStderr());
            }
            return result.getStdout().trim();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + what, e);
        } catch (IOException e) {
            throw new IllegalStateException("could not run " + what + " in " + container.getContainerName(), e);
        }
    }

    private void exec(String shell, String what) {
        run(List.of("sh", "-c", shell), what);
    }

    /**
     * Restarts every node's process, one at a time (SIGTERM: Redis writes its files and exits), as a
     * rolling restart of a cluster is done: a primary first hands its slots to its replica with a
     * coordinated {@code CLUSTER FAILOVER} (the replica catches up before it takes over, so nothing
     * written is lost), and is restarted as a replica; the next node of the pair then hands them back.
     * A primary restarted while it holds slots would refuse every command ({@code CLUSTERDOWN}) for
     * the two seconds Redis waits before a restarted primary serves. Each node is restarted once the
     * one before serves again, every replica is back in sync and every node sees the same layout
     * ({@link #awaitAgreement}); the cluster keeps its ports and, after the whole restart, its roles.
     */
    @Override
    public void restart() {
        for (int p : ports) {
            if (cli(p, "ROLE").startsWith("master")) {
                int replica = replicaOf(p);
                awaitKnownAsReplica(p, replica);
                String reply = cli(replica, "CLUSTER", "FAILOVER");
                if (!reply.equals("OK")) {
                    throw new IllegalStateException("CLUSTER FAILOVER on node " + replica + " answered: " + reply);
                }
                awaitServing(p, state -> state.get(replica).contains("role:master")
                        && state.get(p).contains("role:slave"), "hand its slots to its replica " + replica);
            }
            int before = readyCount(status().get(p));
            exec("kill -TERM $(cat /data/" + p + "/pid)", "stop node " + p);
            awaitServing(p, state -> readyCount(state.get(p)) > before, "serve again after a restart");
            awaitAgreement("after the restart of node " + p);
        }
    }

    /**
     * Waits until every node sees the same cluster: the same primaries with the same slots, the same
     * replicas of each, no node failing or in a handshake. A node that restarted, or one that took no
     * part in a failover, learns the new roles by gossip a while after the nodes it concerns; until then
     * it sends clients that ask it for the layout to the old primary, whose {@code MOVED} then names a
     * node those clients do not know as a primary. Seen: a waiter's client that read its layout from
     * such a node was refused for three to five seconds after the restart had returned. A rolling
     * restart goes on, and ends, once the nodes agree, as operators wait for {@code --cluster check}.
     */
    private void awaitAgreement(String when) {
        poll(this::views, views -> views.size() == ports.size() && new java.util.HashSet<>(views.values()).size() == 1
                && !views.values().iterator().next().isEmpty(),
                views -> "the nodes of the Redis cluster did not agree on its layout within " + STARTUP + " " + when
                        + "; their views:\n" + views);
    }

    /**
     * Each node's view of the cluster from {@code CLUSTER NODES}, read in one command inside the
     * container: per node, the sorted lines "address role primary slots"; empty if the node does not
     * answer, sees a node failing or in a handshake, or has a link down.
     */
    private java.util.Map<Integer, String> views() {
        StringBuilder script = new StringBuilder();
        for (int p : ports) {
            script.append("echo '#node ").append(p).append("'; redis-cli -p ").append(p).append(" CLUSTER NODES;");
        }
        script.append(" true");
        String out = run(List.of("sh", "-c", script.toString()), "read the nodes' views of the cluster");
        return ClusterNodesViews.parse(out);
    }

    /**
     * Waits until the primary on {@code primary} knows {@code replica} as its replica in its own view of the
     * cluster, which gossip brings some time after the replica follows it. A primary ignores the
     * failover request of a node it does not know as its replica: {@code CLUSTER FAILOVER} then answers
     * OK and nothing happens (seen on a cluster restarted within seconds of its creation).
     */
    private void awaitKnownAsReplica(int primary, int replica) {
        String id = cli(primary, "CLUSTER", "MYID").trim();
        // <id> <ip:port@bus> <flags> <its primary's id> ...
        poll(() -> cli(primary, "CLUSTER", "NODES"), nodes -> nodes.lines().map(l -> l.split(" "))
                .anyMatch(f -> f.length > 3 && f[1].contains(":" + replica + "@")
                        && List.of(f[2].split(",")).contains("slave") && f[3].equals(id)),
                nodes -> "node " + primary + " of the Redis cluster did not learn within " + STARTUP + " that node "
                        + replica + " is its replica; its view:\n" + nodes);
    }

    /**
     * Waits until {@code condition} holds of the nodes' state, node {@code port} sees the cluster whole
     * and every replica is in sync with its primary: a grant's {@code WAIT} then finds the replica it expects.
     */
    private void awaitServing(int port, java.util.function.Predicate<java.util.Map<Integer, String>> condition,
            String what) {
        poll(this::status, state -> condition.test(state) && state.get(port).contains("cluster_state:ok")
                && replicasInSync(state), state -> {
                    String log = "/data/" + port + "/redis.log";
                    return "node " + port + " of the Redis cluster did not " + what + " within " + STARTUP
                            + "; its state:\n" + state.get(port) + "\nits log:\n"
                            + run(List.of("tail", "-n", "50", log), "tail " + log);
                });
    }

    /**
     * Reads {@code read} until {@code done} holds of what it read, for up to {@link #STARTUP}; then fails
     * with the message {@code failure} makes of the last reading.
     */
    private static <T> void poll(java.util.function.Supplier<T> read, java.util.function.Predicate<T> done,
            java.util.function.Function<T, String> failure) {
        long deadline = System.nanoTime() + STARTUP.toNanos();
        while (true) {
            T last = read.get();
            if (done.test(last)) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(failure.apply(last));
            }
            sleepBriefly();
        }
    }

    /**
     * Every node's replication info, cluster info and count of "Ready to accept connections" in its
     * log, read in one command inside the container (an unanswering node's is empty but for the count).
     */
    private java.util.Map<Integer, String> status() {
        StringBuilder script = new StringBuilder();
        for (int p : ports) {
            script.append("echo '#node ").append(p).append("'; redis-cli -p ").append(p).append(" INFO replication;")
                    .append(" redis-cli -p ").append(p).append(" CLUSTER INFO;")
                    .append(" echo ready=$(grep -c 'Ready to accept connections' /data/").append(p)
                    .append("/redis.log);");
        }
        script.append(" true");
        String out = run(List.of("sh", "-c", script.toString()), "read the nodes' state");
        java.util.Map<Integer, String> state = new java.util.HashMap<>();
        for (String part : out.split("#node ")) {
            if (!part.isBlank()) {
                int eol = part.indexOf('\n');
                state.put(Integer.parseInt(part.substring(0, eol < 0 ? part.length() : eol).trim()), part);
            }
        }
        return state;
    }

    private static int readyCount(String nodeState) {
        int i = nodeState.lastIndexOf("ready=");
        String n = nodeState.substring(i + 6).trim().split("\\s")[0];
        return n.isEmpty() ? 0 : Integer.parseInt(n);
    }

    /** Whether every replica is linked to its primary and every primary counts its replica online. */
    private static boolean replicasInSync(java.util.Map<Integer, String> state) {
        int online = 0;
        int linked = 0;
        for (String info : state.values()) {
            if (info.contains("role:master")) {
                online += count(info, "state=online");
            } else if (info.contains("master_link_status:up")) {
                linked++;
            }
        }
        return online == NODES / 2 && linked == NODES / 2;
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + what.length())) {
            n++;
        }
        return n;
    }

    /** Stops every node (SIGSTOP of its processes): connections stay open and nothing answers. */
    @Override
    public void pause() {
        ContainerPause.pause(container);
    }

    /** Undoes {@link #pause()}. */
    @Override
    public void unpause() {
        ContainerPause.unpause(container);
    }

    @Override
    public void close() {
        container.stop();
    }

    private static void sleepBriefly() {
        try {
            Thread.sleep(50); // polling the node's log and state, no event to wait on
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while restarting the Redis cluster", e);
        }
    }
}
