package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.LockServer;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.jdbc.MariaDbServer;
import io.latchkey.testkit.jdbc.PostgresServer;
import java.net.URI;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Latchkey on an application's pool whose connections come with autocommit off (HikariCP's
 * {@code autoCommit=false}, as many Spring and JPA applications configure it), on PostgreSQL and MariaDB:
 * what it writes is committed all the same, though the pool rolls back a connection that comes back with
 * work not committed. A lock so held keeps another client out, past its lease by renewals, until it is
 * released; tables it creates stay.
 */
class AutoCommitOffPoolTest {

    @RegisterExtension
    static final SharedServer<PostgresServer> POSTGRES = SharedServer.of(JdbcRows.POSTGRES, PostgresServer::start);

    @RegisterExtension
    static final SharedServer<MariaDbServer> MARIADB = SharedServer.of(JdbcRows.MARIADB, MariaDbServer::start);

    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    private static final AtomicInteger POOLS = new AtomicInteger();

    @ParameterizedTest
    @ValueSource(strings = {JdbcRows.POSTGRES, JdbcRows.MARIADB})
    void aLockHeldThroughSuchAPoolKeepsAnotherClientOutUntilReleased(String database) throws Exception {
        LockServer server = server(database);
        LockOptions options = LockOptions.builder().lease(LEASE).timeout(TIMEOUT).namespace("nocommit").build();
        LockClient.connect(URI.create(server.uri(server.endpoints())), options).close(); // the tables, by a pool of Latchkey's
        try (HikariDataSource poolA = pool(server); HikariDataSource poolB = pool(server);
                LockClient a = JdbcLockProvider.client(poolA, options);
                LockClient b = JdbcLockProvider.client(poolB, options)) {
            Lease held = a.lock("shared").tryLock(Duration.ZERO).orElseThrow();
            assertThat(b.lock("shared").tryLock(Duration.ZERO)).as("B's acquire while A holds 'shared'").isEmpty();

            Thread.sleep(LEASE.plus(LEASE.dividedBy(2)).toMillis()); // past the lease: only renewals keep it
            assertThat(held.isValid()).as("A's lease past its lease").isTrue();
            assertThat(b.lock("shared").tryLock(Duration.ZERO)).as("B's acquire while A holds 'shared' past its lease")
                    .isEmpty();

            held.close();
            try (Lease next = b.lock("shared").tryLock(Duration.ZERO).orElseThrow()) {
                assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {JdbcRows.POSTGRES, JdbcRows.MARIADB})
    void tablesCreatedThroughSuchAPoolStay(String database) throws Exception {
        LockServer server = server(database);
        LockOptions options = LockOptions.builder().lease(LEASE).timeout(TIMEOUT).namespace("created_nocommit").build();
        try (HikariDataSource pool = pool(server)) {
            JdbcLockProvider.client(pool, options).close();
        }
        try (Connection c = JdbcRows.connect(server); Statement s = c.createStatement();
                ResultSet names = s.executeQuery("SELECT count(*) FROM created_nocommit_names")) {
            assertThat(names.next()).isTrue(); // a table that was rolled back fails the read
        }
    }

    private static LockServer server(String database) {
        return database.equals(JdbcRows.POSTGRES) ? POSTGRES.get() : MARIADB.get();
    }

    /**
     * An application's pool of {@code server} whose connections come with autocommit off; on PostgreSQL
     * they show in {@code pg_stat_activity} with the pool's name as their {@code application_name}.
     */
    static HikariDataSource pool(LockServer server) {
        return pool(server, 4);
    }

    /** {@link #pool(LockServer)}, of {@code size} connections at most. */
    static HikariDataSource pool(LockServer server, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(JdbcRows.jdbcUrl(server));
        config.setUsername(server instanceof PostgresServer ? PostgresServer.USER : MariaDbServer.USER);
        config.setPassword(server instanceof PostgresServer ? PostgresServer.PASSWORD : MariaDbServer.PASSWORD);
        config.setAutoCommit(false);
        config.setMaximumPoolSize(size);
        config.setPoolName("application-" + POOLS.incrementAndGet());
        if (server instanceof PostgresServer) {
            config.addDataSourceProperty("ApplicationName", config.getPoolName());
        }
        return new HikariDataSource(config);
    }
}
