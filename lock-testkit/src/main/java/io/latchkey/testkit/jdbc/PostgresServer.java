package io.latchkey.testkit.jdbc;

import io.latchkey.testkit.LockServer;
import io.latchkey.testkit.ServerImages;
import io.latchkey.testkit.fault.ContainerPause;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.testcontainers.images.builder.ImageFromDockerfile;

/**
 * A PostgreSQL 15 server (Debian bookworm's {@code postgresql-15}) in a container, for the JDBC
 * backend's contract: database {@link #DATABASE} owned by {@link #USER}, reached with a scram-sha-256
 * password through a dynamically published port, plain or, from {@link #startWithTls()}, TLS only.
 *
 * <p>{@code pg_stat_statements} is preloaded with {@code track = all} and created in the database, so
 * that a test can count the statements a backend sends ({@link #sql(String)}). A shell loop in the
 * container keeps the postmaster running, so {@link #restart()} stops it cleanly and it starts again on
 * the same data directory while the container, and with it the published port, stays; a commit
 * survives it. Not thread-safe: one test drives it.
 */
public final class PostgresServer implements LockServer {

    /** The name of the image the fixture builds; kept after the run so that the layer cache serves later runs. */
    public static final String IMAGE = "latchkey-test/postgresql:15";
    /** The server's port inside the container. */
    public static final int PORT = 5432;
    /** The database the fixture makes, owned by {@link #USER}, with {@code pg_stat_statements} in it. */
    public static final String DATABASE = "latchkey";
    /** The role that owns {@link #DATABASE}; no superuser. */
    public static final String USER = "latchkey";
    /** {@link #USER}'s password. */
    public static final String PASSWORD = "latchkey-secret";

    private static final String TLS_DIR = "/var/lib/latchkey-postgres/tls";
    private static final ImageFromDockerfile IMAGE_BUILD =
            ServerImages.fromDockerfile(IMAGE, "io/latchkey/testkit/jdbc/postgresql/", "init.sh", "entrypoint.sh");

    private final DatabaseContainer container;
    private final boolean tls;

    private PostgresServer(boolean tls) {
        ServerImages.requireDocker();
        this.tls = tls;
        this.container = new DatabaseContainer("postgresql", IMAGE_BUILD, PORT,
                ".*database system is ready to accept connections.*\\s*")
                .withEnv("LATCHKEY_TLS", tls ? "1" : "0");
        try {
            container.start();
            container.awaitServing(userCheck());
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Builds the image if needed, starts a server that takes plain TCP connections and returns once it serves {@link #USER}. */
    public static PostgresServer start() {
        return new PostgresServer(false);
    }

    /**
     * Starts a server that takes TLS connections only (a plain one is refused by {@code pg_hba.conf}), with a
     * certificate for {@code localhost} and {@code 127.0.0.1} signed by a CA of its own: see
     * {@link #caCertificatePem()}.
     */
    public static PostgresServer startWithTls() {
        return new PostgresServer(true);
    }

    @Override
    public List<InetSocketAddress> endpoints() {
        return List.of(container.endpoint());
    }

    /** {@code postgresql://latchkey:latchkey-secret@host:port/latchkey} through the first of {@code endpoints}. */
    @Override
    public String uri(List<InetSocketAddress> endpoints) {
        return uri(endpoints, USER, PASSWORD);
    }

    /** {@link #uri(List)} as another {@code user} (one a test made with {@link #sql(String)}); {@code password} may be null. */
    public String uri(List<InetSocketAddress> endpoints, String user, String password) {
        return DatabaseContainer.uri("postgresql", endpoints, user, password, DATABASE);
    }

    /** The PEM certificate of the CA that signed the server certificate of {@link #startWithTls()}. */
    public String caCertificatePem() {
        if (!tls) {
            throw new IllegalStateException("this postgresql server does not use TLS; start it with startWithTls()");
        }
        return container.copyFileFromContainer(TLS_DIR + "/ca.pem", in -> new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }

    /**
     * Runs {@code statement} (one or more SQL statements) in {@link #DATABASE} as the superuser {@code postgres}
     * with {@code psql -A -t}, and returns its output stripped: a row a line, columns separated by {@code |}.
     * For looking at rows, making restricted users and grants, and reading or resetting
     * {@code pg_stat_statements}.
     *
     * @throws IllegalStateException with psql's error if the statement fails
     */
    public String sql(String statement) {
        return container.run("psql -c '" + statement + "'",
                "psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", DATABASE, "-c", statement);
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
     * Stops the postmaster cleanly ({@code pg_ctl stop -m fast}: every connection is closed and the data
     * is checkpointed), and returns once the server the container's loop starts again serves {@link #USER}.
     */
    @Override
    public void restart() {
        // pg_ctl returns once the postmaster has removed its pid file: from then on only a new one answers
        container.run("stopping postgresql", "pg_ctl", "-D", "/var/lib/latchkey-postgres/data", "-m", "fast", "-w",
                "-t", "60", "stop");
        container.awaitServing(userCheck());
    }

    @Override
    public void close() {
        container.stop();
    }

    // the fixture's user over TCP and a password, as a client comes: with TLS when the server requires it
    private static String[] userCheck() {
        return new String[] {"sh", "-c", "PGPASSWORD='" + PASSWORD + "' psql -X -A -t -h 127.0.0.1 -p " + PORT
                + " -U " + USER + " -d " + DATABASE + " -c 'select 1'"};
    }

    @Override
    public String toString() {
        return "PostgresServer" + (tls ? "(tls)" : "") + endpoints();
    }
}
