package io.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.jdbc.JdbcLockProvider;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.jdbc.PostgresServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

/**
 * With {@code lock-jdbc} on the class path and no {@code latchkey.uri}, the client is made on the
 * application's DataSource, the one Boot builds from {@code spring.datasource.*} (HikariCP), on a real
 * PostgreSQL: its locks are rows of the database, released when the context closes, before Boot closes
 * the pool. {@code latchkey.uri} still wins, and without {@code lock-jdbc} the starter leaves a
 * DataSource alone.
 */
class DataSourceClientTest {

    @RegisterExtension
    static final SharedServer<PostgresServer> POSTGRES = SharedServer.of("postgresql", PostgresServer::start);

    private static final String HELD = "select owner is not null from latchkey_names where kind='L' and name='%s'";

    @Test
    void theClientIsMadeOnTheApplicationsDataSourceAndClosingTheContextReleasesItsLocks() throws Exception {
        PostgresServer server = POSTGRES.get();
        InetSocketAddress endpoint = server.endpoints().get(0);
        String name = "job:on-datasource";
        HikariDataSource pool;
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class).properties(
                "spring.main.web-application-type=none", "spring.main.banner-mode=off",
                "spring.datasource.url=jdbc:postgresql://" + endpoint.getHostString() + ":" + endpoint.getPort() + "/"
                        + PostgresServer.DATABASE,
                "spring.datasource.username=" + PostgresServer.USER, "spring.datasource.password=" + PostgresServer.PASSWORD,
                "latchkey.lease=4s", "latchkey.timeout=1s").run()) {
            assertThat(context.getBean(DataSource.class)).as("the DataSource Boot built").isInstanceOf(HikariDataSource.class);
            pool = (HikariDataSource) context.getBean(DataSource.class);
            LockClient client = context.getBean(LockClient.class);
            assertThat(client.backendName()).isEqualTo("postgresql");
            assertThat(client.options().lease()).isEqualTo(Duration.ofSeconds(4));
            assertThat(client.options().timeout()).isEqualTo(Duration.ofSeconds(1));

            Lease lease = client.lock(name).tryLock().orElseThrow();
            assertThat(lease.isValid()).isTrue();
            assertThat(server.sql(HELD.formatted(name))).as("the lock's row is held").isEqualTo("t");
            // the lease is left open: the context's shutdown must release it
        }
        assertThat(server.sql(HELD.formatted(name))).as("the lock's row once the context has closed").isEqualTo("f");
        assertThat(pool.isClosed()).as("Boot closed its pool after the client had released through it").isTrue();
    }

    @Test
    void latchkeyUriWinsOverTheDataSource() {
        PostgresServer server = POSTGRES.get();
        // H2 is no database the JDBC backend serves: the context starts only if the URI's client is made
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class))
                .withBean(DataSource.class, DataSourceClientTest::h2)
                .withPropertyValues("latchkey.uri=" + server.uri(server.endpoints()), "latchkey.timeout=2s")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(LockClient.class);
                    LockClient client = context.getBean(LockClient.class);
                    assertThat(client.backendName()).isEqualTo("postgresql");
                    try (Lease lease = client.lock("job:on-uri").tryLock().orElseThrow()) {
                        assertThat(server.sql(HELD.formatted("job:on-uri"))).isEqualTo("t");
                    }
                });
    }

    @Test
    void aDataSourceOfAnotherDatabaseFailsStartUpNamingIt() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class))
                .withBean(DataSource.class, DataSourceClientTest::h2)
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("serves PostgreSQL, MariaDB and MySQL").hasMessageContaining("H2"));
    }

    @Test
    void withoutLockJdbcTheDataSourceIsLeftAlone() {
        new ApplicationContextRunner()
                .withClassLoader(new FilteredClassLoader(JdbcLockProvider.class))
                .withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class))
                .withBean(DataSource.class, DataSourceClientTest::h2)
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LockClient.class));
    }

    private static DataSource h2() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:not-for-locks");
        return h2;
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class App {
    }
}
