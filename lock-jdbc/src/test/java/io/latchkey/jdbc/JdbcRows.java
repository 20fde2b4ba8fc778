package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.LockServer;
import io.latchkey.testkit.jdbc.MariaDbServer;
import io.latchkey.testkit.jdbc.PostgresServer;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * What the tests read of Latchkey's tables, through a JDBC connection of their own to the kit's server:
 * that nothing is left of the names a test used but their token counter rows.
 */
final class JdbcRows {

    /** The key the test classes of one JVM share PostgreSQL under. */
    static final String POSTGRES = "postgresql";
    /** The key the test classes of one JVM share MariaDB under. */
    static final String MARIADB = "mariadb";

    private JdbcRows() {
    }

    /** A connection as the fixture's user, to the database of {@code server}. */
    static Connection connect(LockServer server) throws SQLException {
        return server instanceof PostgresServer
                ? DriverManager.getConnection(jdbcUrl(server), PostgresServer.USER, PostgresServer.PASSWORD)
                : DriverManager.getConnection(jdbcUrl(server), MariaDbServer.USER, MariaDbServer.PASSWORD);
    }

    /** The JDBC URL of the database of {@code server}, whose user and password are the fixture's. */
    static String jdbcUrl(LockServer server) {
        InetSocketAddress e = server.endpoints().get(0);
        if (server instanceof PostgresServer) {
            return "jdbc:postgresql://" + e.getHostString() + ":" + e.getPort() + "/" + PostgresServer.DATABASE;
        }
        return "jdbc:mariadb://" + e.getHostString() + ":" + e.getPort() + "/" + MariaDbServer.DATABASE;
    }

    /**
     * No grant of any of {@code names} is left in the default namespace: no held lock row of kind
     * {@code kinds}, and no holder row of those names at all. Rows of the names table stay: they are the
     * token counters.
     */
    static void assertNothingHeld(LockServer server, Collection<String> names) {
        try (Connection c = connect(server);
                PreparedStatement held = c.prepareStatement("SELECT count(*) FROM latchkey_names WHERE name = ?"
                        + " AND (owner IS NOT NULL OR waiting_writer IS NOT NULL)");
                PreparedStatement holders = c.prepareStatement("SELECT count(*) FROM latchkey_holders WHERE name = ?")) {
            for (String name : names) {
                held.setString(1, name);
                holders.setString(1, name);
                assertThat(count(held)).as("held rows of '%s' in latchkey_names", name).isZero();
                assertThat(count(holders)).as("rows of '%s' in latchkey_holders", name).isZero();
            }
        } catch (SQLException e) {
            throw new AssertionError("could not read the tables to check for leftover rows: " + e, e);
        }
    }

    static long count(PreparedStatement s) throws SQLException {
        try (ResultSet r = s.executeQuery()) {
            r.next();
            return r.getLong(1);
        }
    }

    /** The namespace of {@link #renewalsWhileHolding}'s tables. */
    static final String RENEWALS = "renewals";

    /**
     * Holds {@code locks} locks of namespace {@link #RENEWALS} on one client (lease 3 s, a renewal tick a
     * second) for {@code ticks} ticks after {@code reset} emptied the server's statement statistics, checks
     * that every lease outlived its lease on renewals alone, and returns what {@code count} then reads.
     */
    static long renewalsWhileHolding(LockServer server, int locks, int ticks, Runnable reset, LongSupplier count)
            throws InterruptedException {
        Duration lease = Duration.ofSeconds(3);
        LockOptions options = LockOptions.builder().lease(lease).timeout(Duration.ofSeconds(1)).namespace(RENEWALS).build();
        try (LockClient client = LockClient.connect(java.net.URI.create(server.uri(server.endpoints())), options)) {
            List<Lease> held = new ArrayList<>();
            for (int i = 0; i < locks; i++) {
                held.add(client.lock("held-" + i).tryLock(Duration.ZERO).orElseThrow());
            }
            reset.run();
            Thread.sleep(lease.dividedBy(3).multipliedBy(ticks).toMillis()); // the renewals to count: their ticks are the clock
            long renewals = count.getAsLong();
            assertThat(held).as("leases held past their lease by renewals alone").allMatch(Lease::isValid);
            held.forEach(Lease::close);
            return renewals;
        }
    }
}
