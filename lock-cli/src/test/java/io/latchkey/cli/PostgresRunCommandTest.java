package io.latchkey.cli;

import io.latchkey.testkit.jdbc.PostgresServer;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

/**
 * {@code latchkey run}, {@code elect} and {@code status} against PostgreSQL in a container from the test
 * kit, one server for the class, with the contract's lease: the database expires a row on its own clock,
 * to the millisecond. The URI carries the fixture's password, so the command sees it redacted. It sets
 * {@code pollInterval=500ms}: the backend's default on PostgreSQL, 1s, must be shorter than half the
 * lease, and the contract's lease is 2s.
 */
@DisplayName("latchkey run and elect on PostgreSQL")
class PostgresRunCommandTest extends RunCommandContract {

    private static final String PG_QUERY = QUERY + "&pollInterval=500ms";
    private static PostgresServer postgres;

    @BeforeAll
    static void startServer() {
        postgres = PostgresServer.start();
    }

    @AfterAll
    static void stopServer() {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    InetSocketAddress server() {
        return postgres.endpoints().get(0);
    }

    @Override
    String uri(InetSocketAddress endpoint) {
        return postgres.uri(List.of(endpoint)) + "?" + PG_QUERY;
    }

    /** {@code latchkey elect} on the same server. */
    @Nested
    @DisplayName("latchkey elect")
    class Elect extends ElectCommandContract {
        Elect() {
            super(PostgresRunCommandTest.this);
        }
    }

    /** {@code latchkey status} on the same server. */
    @Nested
    @DisplayName("latchkey status")
    class Status extends StatusCommandContract {
        Status() {
            super(PostgresRunCommandTest.this);
        }
    }
}
