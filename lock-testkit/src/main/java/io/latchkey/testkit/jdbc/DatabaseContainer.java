package io.latchkey.testkit.jdbc;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;

/**
 * The container of one database fixture: one published port, a wait for the server's ready line, and
 * commands run in the container for the fixture's setup, checks and {@code sql()}. Not thread-safe.
 */
final class DatabaseContainer extends GenericContainer<DatabaseContainer> {

    /** How long a server may take to start, and to serve again after a restart. */
    static final Duration STARTUP = Duration.ofSeconds(120);

    private final String server;
    private final int port;

    DatabaseContainer(String server, ImageFromDockerfile image, int port, String readyLine) {
        super(image);
        this.server = server;
        this.port = port;
        withExposedPorts(port);
        waitingFor(Wait.forLogMessage(readyLine, 1).withStartupTimeout(STARTUP));
    }

    InetSocketAddress endpoint() {
        return InetSocketAddress.createUnresolved(getHost(), getMappedPort(port));
    }

    ExecResult exec(String... command) {
        try {
            return execInContainer(StandardCharsets.UTF_8, command);
        } catch (IOException e) {
            throw new IllegalStateException("could not run a command in the " + server + " container: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running a command in the " + server + " container", e);
        }
    }

    /** Runs {@code command} and returns its standard output, stripped; fails with its standard error. */
    String run(String what, String... command) {
        ExecResult r = exec(command);
        if (r.getExitCode() != 0) {
            throw new IllegalStateException(what + " in the " + server + " container failed (exit " + r.getExitCode()
                    + "): " + r.getStderr().strip() + (r.getStdout().isBlank() ? "" : "\n" + r.getStdout().strip()));
        }
        return r.getStdout().strip();
    }

    /**
     * Runs {@code check} until it exits 0: the server is ready once a client of the fixture's user gets an
     * answer, which a ready line in the log or a listening port alone does not prove.
     */
    void awaitServing(String... check) {
        long deadline = System.nanoTime() + STARTUP.toNanos();
        while (true) {
            ExecResult r = exec(check);
            if (r.getExitCode() == 0) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(server + " did not serve within " + STARTUP + ": "
                        + r.getStderr().strip() + "\nlog:\n" + getLogs());
            }
            try {
                Thread.sleep(100); // polling a process in a container: there is nothing to wait on
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + server + " to serve", e);
            }
        }
    }

    /** {@code scheme://user:password@host:port/database} through the first of {@code endpoints}. */
    static String uri(String scheme, List<InetSocketAddress> endpoints, String user, String password, String database) {
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("a " + scheme + " URI needs an endpoint and the list is empty");
        }
        if (user == null || user.isEmpty()) {
            throw new IllegalArgumentException("a " + scheme + " URI needs a user: '" + user + "'");
        }
        InetSocketAddress e = endpoints.get(0);
        String userInfo = encode(user) + (password == null ? "" : ':' + encode(password));
        return scheme + "://" + userInfo + '@' + e.getHostString() + ':' + e.getPort() + '/' + database;
    }

    // percent-encodes all but RFC 3986's unreserved characters, so that any user or password fits the user info
    private static String encode(String s) {
        StringBuilder out = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~".indexOf(c) >= 0) {
                out.append(c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit((b >> 4) & 0xf, 16)))
                        .append(Character.toUpperCase(Character.forDigit(b & 0xf, 16)));
            }
        }
        return out.toString();
    }
}
