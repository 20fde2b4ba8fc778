package io.latchkey.testkit.etcd;

import io.latchkey.testkit.LockServer;
import io.latchkey.testkit.ServerImages;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.StringJoiner;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.lifecycle.Startables;

/**
 * An etcd server (Debian's {@code etcd-server}, 3.4 on bookworm) in Testcontainers: one member, one
 * member with authentication enabled, one serving TLS, or a cluster of members on a Docker network.
 *
 * <p>Every member publishes its client port on a dynamic host port and advertises
 * {@code http://<host>:<published port>}, the address the test reaches. A shell loop in the container
 * keeps etcd running, so {@link #restart()} restarts the process on the same data directory while the
 * container, and with it the published port, stays. Not thread-safe: one test drives it.
 */
public final class EtcdServer implements LockServer {

    /** The name of the image the fixture builds; kept after the run so that the layer cache serves later runs. */
    public static final String IMAGE = "latchkey-test/etcd:3.4";
    /** The client port inside the container. */
    public static final int CLIENT_PORT = 2379;

    /** The root user of {@link #startWithAuth()}; may do everything. */
    public static final String ROOT_USER = "root";
    public static final String ROOT_PASSWORD = "root-secret";
    /** A user whose only role grants read and write on {@link #LOCK_PREFIX} and nothing else. */
    public static final String LOCK_USER = "locker";
    public static final String LOCK_PASSWORD = "locker-secret";
    /** A user with no permission at all. */
    public static final String OTHER_USER = "outsider";
    public static final String OTHER_PASSWORD = "outsider-secret";
    /** The key prefix {@link #LOCK_USER} may use. */
    public static final String LOCK_PREFIX = "/locks/";

    /** The election timeout of the fixture's members ({@code --election-timeout}); the heartbeat is a tenth. */
    public static final Duration ELECTION_TIMEOUT = Duration.ofMillis(1000);

    private static final String TLS_DIR = "/etc/latchkey-etcd-tls";
    private static final Duration STARTUP = Duration.ofSeconds(90);
    private static final ImageFromDockerfile IMAGE_BUILD =
            ServerImages.fromDockerfile(IMAGE, "io/latchkey/testkit/etcd/", "entrypoint.sh");

    private final Network network;
    private final List<Member> members;
    private final boolean auth;
    private final boolean tls;

    private EtcdServer(int size, boolean auth, boolean tls) {
        ServerImages.requireDocker();
        this.auth = auth;
        this.tls = tls;
        this.network = Network.newNetwork();
        String cluster = IntStream.range(0, size).mapToObj(i -> name(i) + "=http://" + name(i) + ":2380")
                .collect(Collectors.joining(","));
        this.members = IntStream.range(0, size).mapToObj(i -> new Member(name(i), cluster, network, tls))
                .collect(Collectors.toList());
        try {
            // the members of a cluster must start together: none serves before a quorum has formed
            Startables.deepStart(members).join();
            if (auth) {
                members.get(0).run("enabling authentication", "sh", "-c", String.join(" && ",
                        ctl("user add " + ROOT_USER + ":" + ROOT_PASSWORD + " --interactive=false"),
                        ctl("user grant-role " + ROOT_USER + " root"),
                        ctl("role add locker"),
                        ctl("role grant-permission locker readwrite " + LOCK_PREFIX + " --prefix=true"),
                        ctl("user add " + LOCK_USER + ":" + LOCK_PASSWORD + " --interactive=false"),
                        ctl("user grant-role " + LOCK_USER + " locker"),
                        ctl("user add " + OTHER_USER + ":" + OTHER_PASSWORD + " --interactive=false"),
                        ctl("auth enable")));
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Starts one member without authentication. */
    public static EtcdServer start() {
        return new EtcdServer(1, false, false);
    }

    /**
     * Starts one member that serves clients over TLS only, with a certificate for {@code localhost} and
     * {@code 127.0.0.1} signed by a CA of its own: see {@link #caCertificatePem()}.
     */
    public static EtcdServer startWithTls() {
        return new EtcdServer(1, false, true);
    }

    /**
     * Starts one member with authentication enabled: {@link #ROOT_USER}, {@link #LOCK_USER} limited to
     * {@link #LOCK_PREFIX}, and {@link #OTHER_USER} without any permission.
     */
    public static EtcdServer startWithAuth() {
        return new EtcdServer(1, true, false);
    }

    /** Starts a cluster of {@code size} members, each reachable through its own published port. */
    public static EtcdServer startCluster(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("an etcd cluster needs at least one member: " + size);
        }
        return new EtcdServer(size, false, false);
    }

    @Override
    public List<InetSocketAddress> endpoints() {
        return members.stream().map(Member::endpoint).collect(Collectors.toList());
    }

    @Override
    public String uri(List<InetSocketAddress> endpoints) {
        return uri(endpoints, null, null);
    }

    /** {@link #uri(List)} with credentials in the user info, when {@code user} is not null. */
    public String uri(List<InetSocketAddress> endpoints, String user, String password) {
        StringJoiner hosts = new StringJoiner(",");
        endpoints.forEach(e -> hosts.add(e.getHostString() + ':' + e.getPort()));
        String userInfo = user == null ? "" : user + (password == null ? "" : ':' + password) + '@';
        return (tls ? "etcds://" : "etcd://") + userInfo + hosts;
    }

    /** The PEM certificate of the CA that signed the server certificate of {@link #startWithTls()}. */
    public String caCertificatePem() {
        if (!tls) {
            throw new IllegalStateException("this etcd server does not use TLS; start it with startWithTls()");
        }
        return members.get(0).copyFileFromContainer(TLS_DIR + "/ca.pem",
                in -> new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }

    /**
     * The Prometheus text that member {@code index} serves at {@code /metrics} on its client port:
     * etcd's own counters ({@code etcd_server_proposals_committed_total} for Raft commits,
     * {@code grpc_server_started_total} per gRPC method), for tests that count server operations.
     */
    public String metrics(int index) {
        if (tls) {
            throw new IllegalStateException("metrics() reads plain HTTP; start the server without TLS");
        }
        Member m = members.get(index);
        InetSocketAddress e = m.endpoint();
        java.net.HttpURLConnection c = null;
        try {
            c = (java.net.HttpURLConnection) java.net.URI.create("http://" + e.getHostString() + ":" + e.getPort()
                    + "/metrics").toURL().openConnection();
            c.setConnectTimeout(10_000);
            c.setReadTimeout(10_000);
            c.setRequestProperty("Connection", "close"); // no keep-alive thread left behind in the test's JVM
            if (c.getResponseCode() != 200) {
                throw new IllegalStateException("etcd member " + m.name + " answered /metrics with " + c.getResponseCode());
            }
            try (java.io.InputStream in = c.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        } catch (IOException ex) {
            throw new IllegalStateException("could not read /metrics of etcd member " + m.name + ": " + ex, ex);
        } finally {
            if (c != null) {
                c.disconnect();
            }
        }
    }

    /** How many members there are. */
    public int size() {
        return members.size();
    }

    /** The index of the member that is the Raft leader now, as the running members report it. */
    public int leaderIndex() {
        for (int i = 0; i < members.size(); i++) {
            Member m = members.get(i);
            if (m.held) {
                continue;
            }
            ExecResult r = m.exec("sh", "-c", ctl("endpoint status -w simple"));
            // "http://127.0.0.1:2379, <id>, <version>, <db size>, <is leader>, <is learner>, ..."
            String[] fields = r.getStdout().trim().split(",\\s*");
            if (r.getExitCode() == 0 && fields.length > 4 && fields[4].equals("true")) {
                return i;
            }
        }
        throw new IllegalStateException("no running etcd member reports itself as the leader");
    }

    /** Kills member {@code index} with SIGKILL and keeps it down until {@link #startMember}. */
    public void stopMember(int index) {
        Member m = members.get(index);
        m.run("stopping " + m.name, "sh", "-c",
                "touch /var/lib/latchkey-etcd/hold; pid=$(cat /var/lib/latchkey-etcd/etcd.pid); kill -9 $pid; while kill -0 $pid 2>/dev/null; do sleep 0.1; done");
        m.held = true;
    }

    /** Starts member {@code index} again and waits until it serves. */
    public void startMember(int index) {
        Member m = members.get(index);
        m.run("starting " + m.name, "rm", "-f", "/var/lib/latchkey-etcd/hold");
        m.held = false;
        awaitHealthy(m);
    }

    /** Stops every member's process (SIGSTOP): connections stay open and nothing answers. */
    @Override
    public void pause() {
        members.forEach(io.latchkey.testkit.fault.ContainerPause::pause);
    }

    @Override
    public void unpause() {
        members.forEach(io.latchkey.testkit.fault.ContainerPause::unpause);
    }

    @Override
    public void restart() {
        for (Member m : members) {
            if (!m.held) {
                m.run("stopping " + m.name, "sh", "-c",
                        "pid=$(cat /var/lib/latchkey-etcd/etcd.pid); kill $pid; while kill -0 $pid 2>/dev/null; do sleep 0.1; done");
            }
        }
        for (Member m : members) {
            if (!m.held) {
                awaitHealthy(m);
            }
        }
    }

    @Override
    public void close() {
        for (Member m : members) {
            try {
                m.stop();
            } catch (RuntimeException e) {
                // keep stopping the others
            }
        }
        network.close();
    }

    private void awaitHealthy(Member m) {
        long deadline = System.nanoTime() + STARTUP.toNanos();
        String health = ctl("endpoint health");
        while (true) {
            ExecResult r = m.exec("sh", "-c", health);
            if (r.getExitCode() == 0) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("etcd member " + m.name + " did not serve again within " + STARTUP
                        + ": " + r.getStderr() + "\n" + m.getLogs());
            }
            try {
                Thread.sleep(200); // polling a process in a container: there is nothing to wait on
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for etcd member " + m.name, e);
            }
        }
    }

    private String ctl(String command) {
        return "ETCDCTL_API=3 etcdctl --endpoints=" + (tls ? "https" : "http") + "://127.0.0.1:" + CLIENT_PORT
                + (tls ? " --cacert=" + TLS_DIR + "/ca.pem" : "") + " --command-timeout=5s"
                + (auth ? " --user=" + ROOT_USER + ":" + ROOT_PASSWORD : "") + " " + command;
    }

    private static String name(int i) {
        return "etcd" + i;
    }

    @Override
    public String toString() {
        return "EtcdServer" + endpoints();
    }

    /** One etcd member in its container. */
    private static final class Member extends GenericContainer<Member> {
        private final String name;
        private final String cluster;
        private final boolean tls;
        private volatile boolean held;

        Member(String name, String cluster, Network network, boolean tls) {
            super(IMAGE_BUILD);
            this.name = Objects.requireNonNull(name);
            this.cluster = cluster;
            this.tls = tls;
            withNetwork(network);
            withNetworkAliases(name);
            withExposedPorts(CLIENT_PORT);
            waitingFor(Wait.forLogMessage(".*ready to serve client requests.*", 1).withStartupTimeout(STARTUP));
        }

        @Override
        protected void containerIsStarting(com.github.dockerjava.api.command.InspectContainerResponse info) {
            // the published port is known only now; the entrypoint waits for this file
            String conf = "ETCD_MEMBER=" + name + "\n"
                    + "ETCD_CLUSTER=" + cluster + "\n"
                    + "ETCD_TLS=" + (tls ? "1" : "0") + "\n"
                    + "ETCD_ELECTION_MS=" + ELECTION_TIMEOUT.toMillis() + "\n"
                    + "ETCD_HEARTBEAT_MS=" + ELECTION_TIMEOUT.toMillis() / 10 + "\n"
                    + "ETCD_ADVERTISE=" + (tls ? "https" : "http") + "://" + getHost() + ":" + getMappedPort(CLIENT_PORT) + "\n";
            copyFileToContainer(Transferable.of(conf.getBytes(StandardCharsets.UTF_8)), "/etc/latchkey-etcd.conf");
            // last: the entrypoint waits for it, so that it never reads a configuration still being written
            copyFileToContainer(Transferable.of(new byte[0]), "/etc/latchkey-etcd.ready");
        }

        InetSocketAddress endpoint() {
            return InetSocketAddress.createUnresolved(getHost(), getMappedPort(CLIENT_PORT));
        }

        ExecResult exec(String... command) {
            try {
                return execInContainer(command);
            } catch (IOException e) {
                throw new IllegalStateException("could not run a command in etcd member " + name + ": " + e, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while running a command in etcd member " + name, e);
            }
        }

        void run(String what, String... command) {
            ExecResult r = exec(command);
            if (r.getExitCode() != 0) {
                throw new IllegalStateException(what + " failed (exit " + r.getExitCode() + "): " + r.getStdout()
                        + r.getStderr());
            }
        }

        // identity: Startables collects the members in a set, and members differ only in state GenericContainer
        // may not compare
        @Override
        public boolean equals(Object o) {
            return this == o;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }
    }
}
