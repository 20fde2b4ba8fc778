package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.jdbc.PostgresServer;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A user limited to Latchkey's tables, a user that may not create them, and TLS, on PostgreSQL.
 */
class PostgresSecurityTest {

    @RegisterExtension
    static final SharedServer<PostgresServer> SERVER = SharedServer.of(JdbcRows.POSTGRES, PostgresServer::start);

    private static final String USER = "locker";
    private static final String PASSWORD = "locker-secret";

    @Test
    void aUserLimitedToTheLockTablesLocksAndIsToldWhatIsMissingElsewhere() throws Exception {
        PostgresServer server = SERVER.get();
        try (LockClient owner = LockClient.connect(server.uri(server.endpoints()))) {
            owner.lock("creates-the-tables").tryLock(Duration.ZERO).orElseThrow().close();
        }
        server.sql("do $$ begin if not exists (select from pg_roles where rolname = '" + USER + "') then create role " + USER
                + " login password '" + PASSWORD + "'; end if; end $$");
        server.sql("grant select, insert, update, delete on latchkey_names, latchkey_holders to " + USER);
        server.sql("revoke create on schema public from " + USER);

        try (LockClient limited = LockClient.connect(server.uri(server.endpoints(), USER, PASSWORD))) {
            try (Lease lease = limited.lock("limited-user").tryLock(Duration.ZERO).orElseThrow()) {
                assertThat(lease.isValid()).isTrue();
                assertThat(limited.lock("limited-user").inspect().holder()).isPresent();
            }
        }

        Throwable missing = catchThrowable(() -> LockClient.connect(server.uri(server.endpoints(), USER, PASSWORD)
                + "?namespace=not_created").close());
        assertThat(missing).isInstanceOf(IllegalArgumentException.class);
        assertThat(missing.getMessage()).contains("not_created_names", "not_created_holders", "may not create them",
                "CREATE TABLE IF NOT EXISTS not_created_names", "schema-postgresql.sql");
        assertThat(server.sql("select count(*) from pg_tables where tablename like 'not\\_created%'")).isEqualTo("0");
        awaitNoConnectionOf(server, USER); // the failed connect closed the pool it had opened
    }

    /** Returns once the server has no connection of {@code user}: a closed connection's backend ends soon after. */
    private static void awaitNoConnectionOf(PostgresServer server, String user) throws InterruptedException {
        String count = "select count(*) from pg_stat_activity where usename = '" + user + "'";
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!server.sql(count).equals("0")) {
            assertThat(System.nanoTime() - end).as("connections of %s left on the server", user).isNegative();
            Thread.sleep(20); // reading the server's view until the backends are gone: there is nothing to wait on
        }
    }

    @Test
    void tlsWithTheServersCaAndNoPlainConnection(@TempDir Path dir) throws Exception {
        try (PostgresServer tls = PostgresServer.startWithTls()) {
            Path ca = Files.writeString(dir.resolve("ca.pem"), tls.caCertificatePem());
            String uri = tls.uri(tls.endpoints()) + "?sslmode=verify-full&sslrootcert="
                    + URLEncoder.encode(ca.toString(), StandardCharsets.UTF_8);
            try (LockClient client = LockClient.connect(uri); Lease lease = client.lock("over-tls").tryLock(Duration.ZERO).orElseThrow()) {
                assertThat(lease.isValid()).isTrue();
                assertThat(tls.sql("select count(*) from pg_stat_ssl join pg_stat_activity using (pid) where ssl and"
                        + " application_name = 'latchkey'")).isNotEqualTo("0");
            }
            Throwable plain = catchThrowable(() -> LockClient.connect(tls.uri(tls.endpoints()) + "?sslmode=disable").close());
            assertThat(plain).isInstanceOf(IllegalArgumentException.class);
            assertThat(plain.getMessage()).contains("refused", "no encryption");
        }
    }
}
