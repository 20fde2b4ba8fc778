package io.latchkey.testkit.zookeeper;

import io.latchkey.testkit.LockServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.testcontainers.containers.Network;

/**
 * A three-node ZooKeeper 3.8 ensemble in containers on one Docker network; the test reaches each
 * node's client port through its own published port on localhost.
 *
 * <p>Nodes are numbered 0 to 2 in the order of {@link #endpoints()}. {@link #stopNode(int)} kills a
 * node's server process and keeps it down (the container and its port stay), {@link #startNode(int)}
 * lets it start again; {@link #leader()} asks every node with {@code srvr}.
 *
 * <p>Not thread-safe: drive it from the test's thread.
 */
public final class ZooKeeperEnsemble implements LockServer {

    private static final int SIZE = 3;
    private static final Duration QUORUM_WAIT = Duration.ofMinutes(2);

    private final Network network = Network.newNetwork();
    private final List<ZooKeeperNode> nodes = new ArrayList<>();

    private ZooKeeperEnsemble() {
        StringBuilder servers = new StringBuilder();
        for (int i = 1; i <= SIZE; i++) {
            servers.append(servers.length() == 0 ? "" : " ")
                    .append("server.").append(i).append("=zk").append(i).append(":2888:3888;").append(ZooKeeperNode.CLIENT_PORT);
        }
        for (int i = 1; i <= SIZE; i++) {
            nodes.add(new ZooKeeperNode("zk" + i, i, servers.toString(), network, answer -> answer.startsWith("imok")));
        }
    }

    /** Starts the three nodes and returns once they have elected a leader and all serve requests. */
    public static ZooKeeperEnsemble start() {
        ZooKeeperEnsemble ensemble = new ZooKeeperEnsemble();
        try {
            ensemble.nodes.forEach(ZooKeeperNode::start);
            ensemble.awaitServing(List.of(0, 1, 2));
        } catch (RuntimeException e) {
            ensemble.close();
            throw e;
        }
        return ensemble;
    }

    @Override
    public List<InetSocketAddress> endpoints() {
        return nodes.stream().map(ZooKeeperNode::endpoint).collect(Collectors.toList());
    }

    @Override
    public String uri(List<InetSocketAddress> endpoints) {
        return ZooKeeperServer.uriOf(endpoints);
    }

    /**
     * A bound, from the nodes' configuration, on how long the ensemble takes to serve again after its
     * leader dies: followers notice within {@code syncLimit} ticks, and the new leader must gather and
     * sync a quorum within {@code initLimit} ticks.
     */
    public static Duration failoverTime() {
        return Duration.ofMillis((long) ZooKeeperNode.TICK_MS * (ZooKeeperNode.SYNC_LIMIT + ZooKeeperNode.INIT_LIMIT));
    }

    /** The ZooKeeper connection string of all nodes, for a raw ZooKeeper or Curator client. */
    public String connectString() {
        return endpoints().stream().map(a -> a.getHostString() + ":" + a.getPort()).collect(Collectors.joining(","));
    }

    /** The index of the node that reports {@code Mode: leader}, or -1 if none does right now. */
    public int leader() {
        for (int i = 0; i < nodes.size(); i++) {
            if (nodes.get(i).srvrQuietly().contains("Mode: leader")) {
                return i;
            }
        }
        return -1;
    }

    /** Sends a four-letter word to node {@code index} and returns the answer. */
    public String fourLetterWord(int index, String word) throws IOException {
        return nodes.get(index).fourLetterWord(word);
    }

    /** Kills node {@code index}'s server process (SIGKILL) and keeps it down until {@link #startNode}. */
    public void stopNode(int index) {
        nodes.get(index).killAndHold();
    }

    /** Starts node {@code index}'s server process again and returns once it serves. */
    public void startNode(int index) {
        nodes.get(index).startProcess();
        awaitServing(List.of(index));
    }

    /** Waits until the listed nodes serve requests (a quorum has a leader). */
    public void awaitServing(List<Integer> indexes) {
        long deadline = System.nanoTime() + QUORUM_WAIT.toNanos();
        while (System.nanoTime() - deadline < 0) {
            if (indexes.stream().allMatch(i -> nodes.get(i).serving())) {
                return;
            }
            ZooKeeperNode.sleep(100);
        }
        StringBuilder state = new StringBuilder();
        for (int i : indexes) {
            state.append("\n--- ").append(nodes.get(i).name()).append(": ").append(nodes.get(i).srvrQuietly())
                    .append("\n").append(tail(nodes.get(i).logs()));
        }
        throw new IllegalStateException("zookeeper ensemble nodes " + indexes + " did not serve within " + QUORUM_WAIT + state);
    }

    @Override
    public void restart() {
        List<String> old = new ArrayList<>();
        for (ZooKeeperNode node : nodes) {
            old.add(node.killForRestart());
        }
        long deadline = System.nanoTime() + QUORUM_WAIT.toNanos();
        while (System.nanoTime() - deadline < 0) {
            boolean all = true;
            for (int i = 0; i < nodes.size() && all; i++) {
                String pid = nodes.get(i).pid();
                all = !pid.isEmpty() && !pid.equals(old.get(i)) && nodes.get(i).serving();
            }
            if (all) {
                return;
            }
            ZooKeeperNode.sleep(100);
        }
        throw new IllegalStateException("zookeeper ensemble did not serve again within " + QUORUM_WAIT + " after a restart");
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        for (ZooKeeperNode node : nodes) {
            try {
                node.close();
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        network.close();
        if (failure != null) {
            throw failure;
        }
    }

    private static String tail(String log) {
        return log.length() <= 4000 ? log : log.substring(log.length() - 4000);
    }

    @Override
    public String toString() {
        return "ZooKeeperEnsemble{" + connectString() + '}';
    }
}
