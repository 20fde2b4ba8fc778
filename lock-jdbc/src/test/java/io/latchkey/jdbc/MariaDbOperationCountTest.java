package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.jdbc.MariaDbServer;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a lock costs the server, counted by MariaDB itself (the statement digests of
 * {@code performance_schema}), on tables of a namespace of this test's own: one statement to grant a name
 * used before, one to release, and the name's counter row is all that stays.
 */
class MariaDbOperationCountTest {

    @RegisterExtension
    static final SharedServer<MariaDbServer> SERVER = SharedServer.of(JdbcRows.MARIADB, MariaDbServer::start);

    private static final String NAMESPACE = "opcount";

    @Test
    void lockAndUnlockAreTwoStatementsAndLeaveTheCounterRow() throws Exception {
        MariaDbServer server = SERVER.get();
        LockOptions options = LockOptions.builder().lease(Duration.ofSeconds(30)).namespace(NAMESPACE).build();
        try (LockClient client = LockClient.connect(URI.create(server.uri(server.endpoints())), options)) {
            for (int i = 0; i < 2; i++) { // the first grant of a name inserts its row: counted below is a name used before
                try (Lease warm = client.lock("counted").tryLock(Duration.ZERO).orElseThrow()) {
                    assertThat(warm.isValid()).isTrue();
                }
            }
            server.sql("truncate table performance_schema.events_statements_summary_by_digest");
            long token;
            try (Lease lease = client.lock("counted").tryLock(Duration.ZERO).orElseThrow()) {
                token = lease.fencingToken();
            }
            assertThat(statements(server)).as("statements on %s_names and %s_holders for one lock and unlock: %s", NAMESPACE,
                    NAMESPACE, server.sql("select count_star, digest_text from performance_schema.events_statements_summary_by_digest"
                            + " where digest_text like '%" + NAMESPACE + "%'")).isEqualTo(2);
            assertThat(server.sql("select token, owner is null, expires_ms is null from " + MariaDbServer.DATABASE + "."
                    + NAMESPACE + "_names where kind = 'L' and name = 'counted'")).as("the counter row after release")
                    .isEqualTo(token + "\t1\t1");
            assertThat(server.sql("select count(*) from " + MariaDbServer.DATABASE + "." + NAMESPACE + "_holders")).isEqualTo("0");
        }
    }

    /** How many statements that touch this namespace's tables MariaDB ran since the digests were emptied. */
    private static long statements(MariaDbServer server) {
        String sum = server.sql("select coalesce(sum(count_star), 0) from performance_schema.events_statements_summary_by_digest"
                + " where digest_text like '%" + NAMESPACE + "\\_names%' or digest_text like '%" + NAMESPACE + "\\_holders%'");
        return Long.parseLong(sum.trim());
    }

    private static final int LOCKS = 50;
    private static final int TICKS = 3;

    /** Held locks on one client: each held row is renewed by a statement of its own a tick, and every lock stays valid. */
    @Test
    void heldLocksAreRenewedTogether() throws Exception {
        MariaDbServer server = SERVER.get();
        long renewals = JdbcRows.renewalsWhileHolding(server, LOCKS, TICKS, () -> server.sql("truncate table performance_schema.events_statements_summary_by_digest"),
                () -> Long.parseLong(server.sql("select coalesce(sum(count_star), 0) from"
                        + " performance_schema.events_statements_summary_by_digest where digest_text like 'UPDATE `"
                        + JdbcRows.RENEWALS + "\\_names` SET `expires\\_ms`%'").trim()));
        // one statement per held row a tick: UPDATE returns no rows on MariaDB to batch with
        assertThat(renewals).as("renewal statements for %d held locks over %d ticks", LOCKS, TICKS)
                .isBetween((long) LOCKS, LOCKS * (TICKS + 1L));
    }

    private static final int MANY = 10_000;

    /**
     * A client holding 10,000 locks keeps every one past the lease: a tick renews them in batches, a lock's
     * rows in one transaction per batch (one commit, where MariaDB flushes its log at each), each batch
     * within the timeout option. Renewed one commit per row within one timeout per tick, most were lost.
     */
    @Test
    void tenThousandHeldLocksStayValidPastTheLease() throws Exception {
        MariaDbServer server = SERVER.get();
        Duration lease = Duration.ofSeconds(6);
        LockOptions options = LockOptions.builder().lease(lease).namespace("manyheld").build();
        try (LockClient client = LockClient.connect(URI.create(server.uri(server.endpoints())), options)) {
            List<Lease> leases = new ArrayList<>(MANY);
            try {
                for (int i = 0; i < MANY; i++) {
                    leases.add(client.lock("held-" + i).tryLock(Duration.ZERO).orElseThrow());
                }
                Thread.sleep(lease.plusSeconds(1).toMillis());
                assertThat(leases.stream().filter(l -> !l.isValid()).count())
                        .as("leases of %d held locks no longer valid a lease and a second after the last grant", MANY).isZero();
            } finally {
                for (Lease l : leases) {
                    l.close();
                }
            }
        }
    }
}
