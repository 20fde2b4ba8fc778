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
import java.util.Collection;

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
        InetSocketAddress e = server.endpoints().get(0);
        if (server instanceof PostgresServer) {
            return DriverManager.getConnection("jdbc:postgresql://" + e.getHostString() + ":" + e.getPort() + "/"
                    + PostgresServer.DATABASE, PostgresServer.USER, PostgresServer.PASSWORD);
        }
        return DriverManager.getConnection("jdbc:mariadb://" + e.getHostString() + ":" + e.getPort() + "/"
                + MariaDbServer.DATABASE, MariaDbServer.USER, MariaDbServer.PASSWORD);
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
}
