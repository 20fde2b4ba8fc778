package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.fault.TcpProxy;
import io.latchkey.testkit.jdbc.PostgresServer;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * What a call that PostgreSQL did not serve says: one that waited out its bound, that the database did
 * not complete it within the timeout; one that failed at once (a refused connection, an error of the
 * database), what failed and why, and nothing of a timeout. Each message is one line.
 */
class PostgresFailureMessageTest {

    @RegisterExtension
    static final SharedServer<PostgresServer> SERVER = SharedServer.of(JdbcRows.POSTGRES, PostgresServer::start);

    /** Long beside a failure at once, so that a call that waited out its bound would show. */
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @Test
    void aSilentServerIsToldWithinTheTimeout() throws Exception {
        Duration timeout = Duration.ofSeconds(1); // waited out
        try (TcpProxy proxy = TcpProxy.start(SERVER.get().endpoints().get(0));
                LockClient client = JdbcLockProvider.client(dataSource(proxy), LockOptions.builder().timeout(timeout).build())) {
            proxy.cut();
            Throwable silent = catchThrowable(() -> client.lock("silent").inspect());
            assertThat(silent).isInstanceOf(LockBackendUnavailableException.class);
            assertThat(silent.getMessage()).contains("did not complete reading the holder of", "'silent'", "within 1s",
                    "check that it runs and is reachable").doesNotContain("\n");
        }
    }

    @Test
    void aRefusedConnectionFailsACallAtOnceAndSaysSo() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(SERVER.get().endpoints().get(0));
                LockClient client = JdbcLockProvider.client(dataSource(proxy), LockOptions.builder().timeout(TIMEOUT).build())) {
            proxy.close(); // the server is gone: its port refuses connections
            long start = System.nanoTime();
            Throwable refused = catchThrowable(() -> client.lock("refused").inspect());
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertThat(refused).isInstanceOf(LockBackendUnavailableException.class);
            assertThat(refused.getMessage()).contains("reading the holder of", "'refused'", "failed: could not connect to",
                    "refused", "check that it runs and accepts connections").doesNotContain("within").doesNotContain("\n");
            assertThat(took).as("a refused connection's failure, with a timeout of %s", TIMEOUT).isLessThan(TIMEOUT);
        }
    }

    /** The driver's own DataSource, through {@code proxy}: a new connection per call, none kept to fail later. */
    private static PGSimpleDataSource dataSource(TcpProxy proxy) {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setServerNames(new String[] {proxy.endpoint().getHostString()});
        dataSource.setPortNumbers(new int[] {proxy.endpoint().getPort()});
        dataSource.setDatabaseName(PostgresServer.DATABASE);
        dataSource.setUser(PostgresServer.USER);
        dataSource.setPassword(PostgresServer.PASSWORD);
        return dataSource;
    }

    @Test
    void aTableWithoutAColumnFailsACallAndAConnectAtOnceAndSaysSo() throws Exception {
        PostgresServer server = SERVER.get();
        URI uri = URI.create(server.uri(server.endpoints()));
        LockOptions options = LockOptions.builder().timeout(TIMEOUT).namespace("altered").build();
        try (LockClient client = LockClient.connect(uri, options)) {
            server.sql("alter table altered_names drop column holder");
            long start = System.nanoTime();
            Throwable acquire = catchThrowable(() -> client.lock("dropped-column").tryLock(Duration.ZERO));
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertThat(acquire).isInstanceOf(LockBackendUnavailableException.class);
            assertThat(acquire.getMessage()).contains("the acquire of", "'dropped-column'", "failed on postgresql database",
                    "column \"holder\"", "42703", "altered_names and altered_holders", "schema-postgresql.sql")
                    .doesNotContain("within").doesNotContain("\n");
            assertThat(took).as("an error of the database, with a timeout of %s", TIMEOUT).isLessThan(TIMEOUT);
        }

        Throwable connect = catchThrowable(() -> LockClient.connect(uri, options).close());
        assertThat(connect).isInstanceOf(LockBackendUnavailableException.class);
        assertThat(connect.getMessage()).contains("checking Latchkey's tables", "failed on postgresql database", "holder",
                "schema-postgresql.sql").doesNotContain("within").doesNotContain("\n");
    }
}
