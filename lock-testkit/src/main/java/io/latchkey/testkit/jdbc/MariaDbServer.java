package io.latchkey.testkit.jdbc;

import io.latchkey.testkit.LockServer;
import io.latchkey.testkit.ServerImages;
import io.latchkey.testkit.fault.ContainerPause;
import java.net.InetSocketAddress;
import java.util.List;
import org.testcontainers.images.builder.ImageFromDockerfile;

/**
 * A MariaDB 10.11 server (Debian bookworm's {@code mariadb-server}) in a container, for the JDBC
 * backend's contract: database {@link #DATABASE}, on which {@link #USER}{@code @'%'} has every
 * privilege, reached with a password through a dynamically published port.
 *
 * <p>{@code performance_schema} is on, so a test can count the statements a backend sends
 * ({@code events_statements_summary_by_digest}, or {@code SHOW GLOBAL STATUS LIKE 'Com_%'}) through
 * {@link #sql(String)}. A shell loop in the container keeps {@code mariadbd} running, so
 * {@link #restart()} stops it cleanly and it starts again on the same data directory while the
 * container, and with it the published port, stays; a commit survives it
 * ({@code innodb_flush_log_at_trx_commit = 1}). Not thread-safe: one test drives it.
 */
public final class MariaDbServer implements LockServer {

    /** The name of the image the fixture builds; kept after the run so that the layer cache serves later runs. */
    public static final String IMAGE = "latchkey-test/mariadb:10.11";
    /** The server's port inside the container. */
    public static final int PORT = 3306;
    /** The database the fixture makes. */
    public static final String DATABASE = "latchkey";
    /** The user ({@code 'latchkey'@'%'}) with every privilege on {@link #DATABASE} and none elsewhere. */
    public static final String USER = "latchkey";
    /** {@link #USER}'s password. */
    public static final String PASSWORD = "latchkey-secret";

    private static final ImageFromDockerfile IMAGE_BUILD = ServerImages.fromDockerfile(IMAGE,
            "io/latchkey/testkit/jdbc/mariadb/", "latchkey.cnf", "init.sh", "entrypoint.sh");

    private final DatabaseContainer container;

    private MariaDbServer() {
        ServerImages.requireDocker();
        this.container = new DatabaseContainer("mariadb", IMAGE_BUILD, PORT, ".*mariadbd: ready for connections.*\\s*");
        try {
            container.start();
            container.awaitServing(userCheck());
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Builds the image if needed, starts the server and returns once it serves {@link #USER}. */
    public static MariaDbServer start() {
        return new MariaDbServer();
    }

    @Override
    public List<InetSocketAddress> endpoints() {
        return List.of(container.endpoint());
    }

    /** {@code mariadb://latchkey:latchkey-secret@host:port/latchkey} through the first of {@code endpoints}. */
    @Override
    public String uri(List<InetSocketAddress> endpoints) {
        return uri(endpoints, USER, PASSWORD);
    }

    /** {@link #uri(List)} as another {@code user} (one a test made with {@link #sql(String)}); {@code password} may be null. */
    public String uri(List<InetSocketAddress> endpoints, String user, String password) {
        return DatabaseContainer.uri("mariadb", endpoints, user, password, DATABASE);
    }

    /**
     * Runs {@code statement} (one or more SQL statements) in {@link #DATABASE} as {@code root} with
     * {@code mariadb -N -B}, and returns its output stripped: a row a line, columns separated by tabs.
     * For looking at rows, making restricted users and grants, and reading statement counters.
     *
     * @throws IllegalStateException with the client's error if the statement fails
     */
    public String sql(String statement) {
        return container.run("mariadb -e '" + statement + "'", "mariadb", "-N", "-B", "-D", DATABASE, "-e", statement);
    }

    /** Stops the server's processes (SIGSTOP): connections stay open and nothing answers. */
    @Override
    public void pause() {
        ContainerPause.pause(container);
    }

    @Override
    public void unpause() {
        ContainerPause.unpause(container);
    }

    /**
     * Stops {@code mariadbd} cleanly (SIGTERM: connections are closed and InnoDB shuts down), and returns
     * once the server the container's loop starts again serves {@link #USER}.
     */
    @Override
    public void restart() {
        // waits until the loop has reaped the old process: from then on only a new one answers
        container.run("stopping mariadbd", "sh", "-c",
                "pid=$(cat /run/latchkey-mariadb.pid); kill $pid; while kill -0 $pid 2>/dev/null; do sleep 0.1; done");
        container.awaitServing(userCheck());
    }

    @Override
    public void close() {
        container.stop();
    }

    // the fixture's user over TCP and a password, as a client comes
    private static String[] userCheck() {
        return new String[] {"mariadb", "-h", "127.0.0.1", "-P", String.valueOf(PORT), "-u", USER,
                "-p" + PASSWORD, "-N", "-B", "-D", DATABASE, "-e", "select 1"};
    }

    @Override
    public String toString() {
        return "MariaDbServer" + endpoints();
    }
}
