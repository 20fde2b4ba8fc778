package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.jdbc.PostgresServer;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a lock costs the server, counted by PostgreSQL itself ({@code pg_stat_statements}), on tables of a
 * namespace of this test's own so that no other test's statements are counted: one statement to grant,
 * one to release, none beside them, and the name's counter row is all that stays; a connect reads each
 * table once.
 */
class PostgresOperationCountTest {

    @RegisterExtension
    static final SharedServer<PostgresServer> SERVER = SharedServer.of(JdbcRows.POSTGRES, PostgresServer::start);

    private static final String NAMESPACE = "opcount";

    @Test
    void lockAndUnlockAreTwoStatementsAndLeaveTheCounterRow() throws Exception {
        PostgresServer server = SERVER.get();
        LockOptions options = LockOptions.builder().lease(Duration.ofSeconds(30)).namespace(NAMESPACE).build();
        try (LockClient client = LockClient.connect(URI.create(server.uri(server.endpoints())), options)) {
            try (Lease warm = client.lock("warm-up").tryLock(Duration.ZERO).orElseThrow()) {
                assertThat(warm.isValid()).isTrue();
            }
            server.sql("select pg_stat_statements_reset()");
            long token;
            try (Lease lease = client.lock("counted").tryLock(Duration.ZERO).orElseThrow()) {
                token = lease.fencingToken();
            }
            assertThat(statements(server, NAMESPACE)).as("statements on %s_names and %s_holders for one lock and unlock: %s", NAMESPACE,
                    NAMESPACE, server.sql("select calls, query from pg_stat_statements where query like '%" + NAMESPACE
                            + "\\_%'")).isEqualTo(2);
            assertThat(server.sql("select token, owner is null, expires_ms is null from " + NAMESPACE
                    + "_names where kind = 'L' and name = 'counted'")).as("the counter row after release")
                    .isEqualTo(token + "|t|t");
            assertThat(server.sql("select count(*) from " + NAMESPACE + "_holders")).isEqualTo("0");
        }
    }

    /** The namespace of {@link #connectingToTablesThatAreThereReadsEachOnce}'s tables. */
    private static final String CONNECTS = "connects";

    /** A client that connects to tables that are there reads each once, for its columns, and creates nothing. */
    @Test
    void connectingToTablesThatAreThereReadsEachOnce() throws Exception {
        PostgresServer server = SERVER.get();
        URI uri = URI.create(server.uri(server.endpoints()));
        LockOptions options = LockOptions.builder().namespace(CONNECTS).build();
        LockClient.connect(uri, options).close(); // the first client creates the tables
        server.sql("select pg_stat_statements_reset()");
        LockClient.connect(uri, options).close();
        assertThat(statements(server, CONNECTS)).as("statements on %s_names and %s_holders for a connect: %s", CONNECTS,
                CONNECTS, server.sql("select calls, query from pg_stat_statements where query like '%" + CONNECTS
                        + "\\_%'")).isEqualTo(2);
    }

    /** How many statements that touch the tables of {@code namespace} PostgreSQL ran since the last reset. */
    private static long statements(PostgresServer server, String namespace) {
        String sum = server.sql("select coalesce(sum(calls), 0) from pg_stat_statements where query like '%" + namespace
                + "\\_names%' or query like '%" + namespace + "\\_holders%'");
        return Long.parseLong(sum.trim());
    }

    private static final int LOCKS = 50;
    private static final int TICKS = 3;

    /** Held locks on one client: one statement a tick renews all of them, and every lock stays valid. */
    @Test
    void heldLocksAreRenewedTogether() throws Exception {
        PostgresServer server = SERVER.get();
        long renewals = JdbcRows.renewalsWhileHolding(server, LOCKS, TICKS, () -> server.sql("select pg_stat_statements_reset()"),
                () -> Long.parseLong(server.sql("select coalesce(sum(calls), 0) from pg_stat_statements where query like"
                        + " 'UPDATE " + JdbcRows.RENEWALS + "\\_names SET expires\\_ms%'").trim()));
        // one statement a tick for all of them: at most one per tick the window holds, and one more for its phase
        assertThat(renewals).as("renewal statements for %d held locks over %d ticks", LOCKS, TICKS)
                .isBetween(1L, TICKS + 1L);
    }
}
