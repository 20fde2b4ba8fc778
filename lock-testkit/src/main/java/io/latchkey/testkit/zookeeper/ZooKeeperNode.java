package io.latchkey.testkit.zookeeper;

import io.latchkey.testkit.ServerImages;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.Predicate;
import org.testcontainers.containers.ContainerLaunchException;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.AbstractWaitStrategy;
import org.testcontainers.images.builder.ImageFromDockerfile;

/**
 * One ZooKeeper server process (Debian's {@code zookeeper} package) in a container, under a small
 * supervisor script so that the process can be killed and started again while the container and its
 * published client port stay. Used by {@link ZooKeeperServer} and {@link ZooKeeperEnsemble}.
 *
 * <p>Not thread-safe: a test drives one node from one thread at a time.
 */
final class ZooKeeperNode implements AutoCloseable {

    /** The image name; kept after the run so that Docker's layer cache makes later runs fast. */
    static final String IMAGE = "latchkey-test/zookeeper:3.8";
    static final int CLIENT_PORT = 2181;
    static final int CONTAINER_CHECK_MS = 500;
    static final int TICK_MS = 500;
    static final int INIT_LIMIT = 10;
    static final int SYNC_LIMIT = 5;
    private static final String RESOURCES = "io/latchkey/testkit/zookeeper/";
    private static final Duration STARTUP = Duration.ofMinutes(5);

    private final String name;
    private final GenericContainer<?> container;

    /**
     * A node; {@code servers} (the {@code server.N} lines of an ensemble) is {@code null} for a
     * standalone server.
     */
    ZooKeeperNode(String name, int myId, String servers, Network network, Predicate<String> ready) {
        this.name = name;
        ServerImages.requireDocker();
        GenericContainer<?> c = new GenericContainer<>(image())
                .withExposedPorts(CLIENT_PORT)
                .withEnv("ZK_CONTAINER_CHECK_MS", Integer.toString(CONTAINER_CHECK_MS))
                .withEnv("ZK_TICK_MS", Integer.toString(TICK_MS))
                .withEnv("ZK_INIT_LIMIT", Integer.toString(INIT_LIMIT))
                .withEnv("ZK_SYNC_LIMIT", Integer.toString(SYNC_LIMIT))
                .waitingFor(new FourLetterWordWait(servers == null ? "srvr" : "ruok", ready).withStartupTimeout(STARTUP));
        if (servers != null) {
            c = c.withEnv("ZK_MYID", Integer.toString(myId)).withEnv("ZK_SERVERS", servers)
                    .withNetwork(network).withNetworkAliases(name);
        }
        this.container = c;
    }

    static ImageFromDockerfile image() {
        return ServerImages.fromDockerfile(IMAGE, RESOURCES, "run-zookeeper.sh");
    }

    void start() {
        container.start();
    }

    String name() {
        return name;
    }

    /** Stops the node's server process (SIGSTOP, see ContainerPause). */
    void pause() {
        io.latchkey.testkit.fault.ContainerPause.pause(container);
    }

    /** Undoes {@link #pause()}. */
    void unpause() {
        io.latchkey.testkit.fault.ContainerPause.unpause(container);
    }

    InetSocketAddress endpoint() {
        return new InetSocketAddress(container.getHost(), container.getMappedPort(CLIENT_PORT));
    }

    /** Sends a four-letter word ({@code srvr}, {@code mntr}, {@code wchp}...) and returns the answer. */
    String fourLetterWord(String word) throws IOException {
        return fourLetterWord(endpoint(), word);
    }

    static String fourLetterWord(InetSocketAddress address, String word) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address.getHostString(), address.getPort()), 2000);
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            out.write(word.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            socket.shutdownOutput();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            in.transferTo(answer);
            return answer.toString(StandardCharsets.UTF_8);
        }
    }

    /** The answer of {@code srvr}, or an empty string if the node does not answer. */
    String srvrQuietly() {
        try {
            return fourLetterWord("srvr");
        } catch (IOException e) {
            return "";
        }
    }

    boolean serving() {
        return srvrQuietly().contains("Mode: ");
    }

    /** Kills the server process with SIGKILL and keeps it down until {@link #startProcess()}. */
    void killAndHold() {
        exec("touch /run/zookeeper.hold; kill -9 \"$(cat /run/zookeeper.pid)\"");
        awaitDown();
    }

    /** Lets the supervisor start the server process again; does not wait for it to serve. */
    void startProcess() {
        exec("rm -f /run/zookeeper.hold");
    }

    /** Kills the server process with SIGKILL; the supervisor starts it again at once. */
    String killForRestart() {
        String pid = exec("cat /run/zookeeper.pid").trim();
        exec("kill -9 " + pid);
        return pid;
    }

    /** The process id of the current server process, as the supervisor recorded it. */
    String pid() {
        return exec("cat /run/zookeeper.pid 2>/dev/null || true").trim();
    }

    private void awaitDown() {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() - deadline < 0) {
            // Docker's port proxy may accept the connection and close it, so look at the answer.
            String answer;
            try {
                answer = fourLetterWord("ruok");
            } catch (IOException e) {
                answer = "";
            }
            if (!answer.startsWith("imok")) {
                return;
            }
            sleep(50);
        }
        throw new IllegalStateException("zookeeper node " + name + " still answers after its process was killed");
    }

    private String exec(String script) {
        try {
            var result = container.execInContainer("sh", "-c", script);
            if (result.getExitCode() != 0) {
                throw new IllegalStateException("'" + script + "' in zookeeper node " + name + " failed with exit code "
                        + result.getExitCode() + ": " + result.getStderr());
            }
            return result.getStdout();
        } catch (IOException e) {
            throw new IllegalStateException("'" + script + "' in zookeeper node " + name + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running '" + script + "' in zookeeper node " + name, e);
        }
    }

    /** The server's own log, for failure messages. */
    String logs() {
        return container.getLogs();
    }

    @Override
    public void close() {
        container.stop();
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Ready when a four-letter word's answer passes a test; polls the published client port. */
    private static final class FourLetterWordWait extends AbstractWaitStrategy {
        private final String word;
        private final Predicate<String> ready;

        FourLetterWordWait(String word, Predicate<String> ready) {
            this.word = word;
            this.ready = ready;
        }

        @Override
        protected void waitUntilReady() {
            InetSocketAddress address = new InetSocketAddress(waitStrategyTarget.getHost(),
                    waitStrategyTarget.getMappedPort(CLIENT_PORT));
            long deadline = System.nanoTime() + startupTimeout.toNanos();
            String last = "";
            while (System.nanoTime() - deadline < 0) {
                try {
                    last = fourLetterWord(address, word);
                    if (ready.test(last)) {
                        return;
                    }
                } catch (IOException e) {
                    last = e.toString();
                }
                sleep(100);
            }
            throw new ContainerLaunchException("zookeeper did not answer '" + word + "' as expected within "
                    + startupTimeout + "; last answer: " + last);
        }
    }
}
