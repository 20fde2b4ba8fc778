package io.latchkey.testkit.redis;

import io.latchkey.testkit.LockServer;
import io.latchkey.testkit.ServerImages;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;

/**
 * A single Redis 7.0 server (Debian bookworm's {@code redis-server}) in a container, reached on
 * localhost through a dynamically published port.
 *
 * <p>The server runs with an append-only file fsynced on every write, so a restart keeps every key,
 * fencing counters included. Its data directory is a tmpfs ({@link #DATA_IN_MEMORY}), where a write
 * reaches the file before the reply as on a disk, so a restart or a kill of the process keeps it, but
 * the fsync costs nothing: on the disk the rest of the build shares, an fsync stalled the whole server
 * for 250 to 360 ms while an image was built or a large file written beside it, long enough to spend
 * most of a test's timeout. Only a crash of the machine would lose what a tmpfs holds. {@link #restart()} restarts the server process inside the running
 * container, which keeps the published port; {@link #restart(Duration)} keeps it down for a while
 * first, an outage of a chosen length. Variants require a password ({@link #withPassword}),
 * an ACL user with the default user disabled ({@link #withAclUser}), or speak only TLS
 * ({@link #withTls}).
 *
 * <p>Thread-safety: start and close from one thread; the accessors may be read from any thread.
 */
public final class RedisServer implements LockServer {

    /** The name of the image the kit builds; kept after the run so Docker's layer cache makes the next build instant. */
    public static final String IMAGE = "latchkey-test/redis:7.0";

    static final int PORT = 6379;
    /** The data directory of every Redis process of the kit, in memory: see the class comment. */
    static final Map<String, String> DATA_IN_MEMORY = Map.of("/data", "rw,mode=1777");
    private static final String TLS_DIR = "/data/tls/";
    private static final String READY = "Ready to accept connections";
    private static final String PID_FILE = "/run/latchkey-server.pid";
    /** While this file exists, {@code latchkey-run} does not start the server again. */
    private static final String HOLD_FILE = "/run/latchkey-hold";
    private static final Duration STARTUP = Duration.ofSeconds(60);

    private final GenericContainer<?> container;
    private final boolean tls;

    private RedisServer(List<String> extraArgs, boolean tls) {
        this.tls = tls;
        List<String> command = new ArrayList<>(List.of("redis-server", "--bind", "0.0.0.0", "--protected-mode", "no",
                "--dir", "/data", "--appendonly", "yes", "--appendfsync", "always"));
        if (tls) {
            command.addAll(List.of("--port", "0", "--tls-port", String.valueOf(PORT),
                    "--tls-cert-file", TLS_DIR + "server.crt", "--tls-key-file", TLS_DIR + "server.key",
                    "--tls-ca-cert-file", TLS_DIR + "ca.crt", "--tls-auth-clients", "no"));
        } else {
            command.addAll(List.of("--port", String.valueOf(PORT)));
        }
        command.addAll(extraArgs);
        String[] start = tls
                ? new String[] {"sh", "-c", "latchkey-certs && exec latchkey-run \"$@\"", "redis"}
                : new String[] {"latchkey-run"};
        List<String> full = new ArrayList<>(List.of(start));
        full.addAll(command);
        this.container = new GenericContainer<>(image())
                .withExposedPorts(PORT)
                .withTmpFs(DATA_IN_MEMORY)
                .withCommand(full.toArray(String[]::new))
                .waitingFor(Wait.forLogMessage(".*" + READY + ".*\\n", 1).withStartupTimeout(STARTUP));
    }

    /** Starts a server without authentication. */
    public static RedisServer start() {
        return start(List.of());
    }

    /** Starts a server that requires {@code password} for the default user ({@code requirepass}). */
    public static RedisServer withPassword(String password) {
        Objects.requireNonNull(password, "password");
        return start(List.of("--requirepass", password));
    }

    /** Starts a server whose only enabled user is the ACL user {@code user} with {@code password}. */
    public static RedisServer withAclUser(String user, String password) {
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(password, "password");
        return start(List.of("--user", user, "on", ">" + password, "~*", "&*", "+@all", "--user", "default", "off"));
    }

    /**
     * Starts a server that speaks only TLS, with a certificate for {@code localhost} and
     * {@code 127.0.0.1} from a certificate authority made up at start ({@link #caCertificatePem()}).
     */
    public static RedisServer withTls() {
        return start(List.of(), true);
    }

    private static RedisServer start(List<String> extraArgs) {
        return start(extraArgs, false);
    }

    private static RedisServer start(List<String> extraArgs, boolean tls) {
        ServerImages.requireDocker();
        RedisServer server = new RedisServer(extraArgs, tls);
        try {
            server.container.start();
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    /** The image built from the kit's Dockerfile on {@link ServerImages#baseImage()}. */
    static ImageFromDockerfile image() {
        return ServerImages.fromDockerfile(IMAGE, "io/latchkey/testkit/redis/", "latchkey-run", "latchkey-certs");
    }

    @Override
    public List<InetSocketAddress> endpoints() {
        return List.of(InetSocketAddress.createUnresolved(container.getHost(), container.getMappedPort(PORT)));
    }

    /** {@code redis://host:port} ({@code rediss://} with TLS), without credentials: tests pass them in the options. */
    @Override
    public String uri(List<InetSocketAddress> endpoints) {
        InetSocketAddress a = endpoints.get(0);
        return (tls ? "rediss://" : "redis://") + a.getHostString() + ":" + a.getPort();
    }

    /** The PEM certificate of the authority that signed a TLS server's certificate. */
    public String caCertificatePem() {
        if (!tls) {
            throw new IllegalStateException("this Redis server does not use TLS; start it with withTls()");
        }
        // read with cat: Docker's copy from a container does not see what a tmpfs mount holds
        try {
            var result = container.execInContainer("cat", TLS_DIR + "ca.crt");
            if (result.getExitCode() != 0) {
                throw new IllegalStateException("could not read " + TLS_DIR + "ca.crt in " + container.getContainerName()
                        + ": " + result.getStderr());
            }
            return result.getStdout();
        } catch (java.io.IOException e) {
            throw new IllegalStateException("could not read " + TLS_DIR + "ca.crt in " + container.getContainerName(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading " + TLS_DIR + "ca.crt", e);
        }
    }

    @Override
    public void restart() {
        restartProcess(container, READY);
    }

    /**
     * Stops the server process (SIGTERM), keeps it down for {@code down} from its exit, then starts it
     * again and returns once it serves: clients meanwhile find the port refused, as during an outage,
     * and reconnect on their own schedule.
     */
    public void restart(Duration down) {
        Objects.requireNonNull(down, "down");
        if (down.isNegative()) {
            throw new IllegalArgumentException("an outage must not be negative, got " + down);
        }
        int before = count(container.getLogs(), READY);
        try {
            exec(container, "touch " + HOLD_FILE + " && pid=$(cat " + PID_FILE + ") && kill -TERM $pid"
                    + " && while kill -0 $pid 2>/dev/null; do sleep 0.05; done", "stop the server process");
            Thread.sleep(down.toMillis()); // the outage itself
            if (count(container.getLogs(), READY) > before) {
                throw new IllegalStateException("the server in " + container.getContainerName() + " came back during"
                        + " an outage of " + down + ": its image's latchkey-run does not know " + HOLD_FILE
                        + "; build the image again from the kit's Dockerfile");
            }
            exec(container, "rm -f " + HOLD_FILE, "end the outage");
            awaitReady(container, READY, before);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during an outage of " + container.getContainerName(), e);
        }
    }

    /** Stops every process of the server (SIGSTOP): connections stay open and nothing answers. */
    @Override
    public void pause() {
        io.latchkey.testkit.fault.ContainerPause.pause(container);
    }

    /** Undoes {@link #pause()}. */
    @Override
    public void unpause() {
        io.latchkey.testkit.fault.ContainerPause.unpause(container);
    }

    /**
     * Runs {@code redis-cli} inside the container with {@code args} (a test's view behind the client's
     * back, for example to delete a lock key), authenticated with {@code cliAuth}, and returns its output.
     */
    public String cli(List<String> cliAuth, String... args) {
        List<String> command = new ArrayList<>(List.of("redis-cli", "--no-auth-warning", "-p", String.valueOf(PORT)));
        if (tls) {
            command.addAll(List.of("--tls", "--cacert", TLS_DIR + "ca.crt"));
        }
        command.addAll(cliAuth);
        command.addAll(List.of(args));
        try {
            var result = container.execInContainer(command.toArray(String[]::new));
            if (result.getExitCode() != 0) {
                throw new IllegalStateException("redis-cli " + List.of(args) + " failed: " + result.getStderr());
            }
            return result.getStdout().trim();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running redis-cli", e);
        } catch (java.io.IOException e) {
            throw new IllegalStateException("could not run redis-cli in " + container.getContainerName(), e);
        }
    }

    @Override
    public void close() {
        container.stop();
    }

    /**
     * Stops the server process of {@code container} with SIGTERM (Redis then writes its files and
     * exits) and waits until the supervising script started it again and it logged {@code ready}.
     */
    static void restartProcess(GenericContainer<?> container, String ready) {
        int before = count(container.getLogs(), ready);
        try {
            exec(container, "kill -TERM $(cat " + PID_FILE + ")", "stop the server process");
            awaitReady(container, ready, before);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while restarting " + container.getContainerName(), e);
        }
    }

    private static void exec(GenericContainer<?> container, String shell, String what) throws InterruptedException {
        try {
            var result = container.execInContainer("sh", "-c", shell);
            if (result.getExitCode() != 0) {
                throw new IllegalStateException("could not " + what + " in " + container.getContainerName() + ": "
                        + result.getStderr());
            }
        } catch (java.io.IOException e) {
            throw new IllegalStateException("could not " + what + " in " + container.getContainerName(), e);
        }
    }

    /** Waits until the log of {@code container} has more than {@code before} lines saying {@code ready}. */
    private static void awaitReady(GenericContainer<?> container, String ready, int before) throws InterruptedException {
        long deadline = System.nanoTime() + STARTUP.toNanos();
        while (count(container.getLogs(), ready) <= before) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the server in " + container.getContainerName()
                        + " did not come back within " + STARTUP + "; its log:\n" + container.getLogs());
            }
            Thread.sleep(50); // polling the container's log, no event to wait on
        }
    }

    private static int count(String log, String what) {
        int n = 0;
        for (int i = log.indexOf(what); i >= 0; i = log.indexOf(what, i + what.length())) {
            n++;
        }
        return n;
    }
}
