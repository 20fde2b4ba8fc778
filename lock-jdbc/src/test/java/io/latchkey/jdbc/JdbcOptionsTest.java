package io.latchkey.jdbc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockClient;
import org.junit.jupiter.api.Test;

/** Bad URIs and options are one clear error each, before anything connects. */
class JdbcOptionsTest {

    private static IllegalArgumentException refused(String uri) {
        Throwable t = org.assertj.core.api.Assertions.catchThrowable(() -> LockClient.connect(uri).close());
        assertThat(t).as("connect(%s)", uri).isInstanceOf(IllegalArgumentException.class);
        return (IllegalArgumentException) t;
    }

    @Test
    void aNamespaceMustBeATablePrefix() {
        assertThat(refused("postgresql://u:p@localhost:1/db?namespace=My-Locks").getMessage())
                .contains("namespace='My-Locks'", "lower-case letters", "<namespace>_names");
    }

    @Test
    void theUriNamesTheDatabase() {
        assertThat(refused("mariadb://u:p@localhost:1").getMessage()).contains("names no database", "mariadb://user:password@host:3306/<database>");
    }

    @Test
    void thePollIntervalIsShorterThanHalfTheLease() {
        assertThat(refused("postgresql://u:p@localhost:1/db?lease=6s&pollInterval=3s").getMessage())
                .contains("pollInterval=3s", "shorter than half the lease", "lease=6s");
    }

    @Test
    void thePoolSizeIsANumberOfConnections() {
        assertThat(refused("postgresql://u:p@localhost:1/db?poolSize=none").getMessage()).contains("poolSize=none", "from 1 to 100");
    }

    @Test
    void tlsOptionsArePostgresOnes() {
        assertThat(refused("mysql://u:p@localhost:1/db?sslmode=require").getMessage()).contains("sslmode", "PostgreSQL's");
    }

    @Test
    void theDdlIsShippedForEachDatabase() {
        assertThat(JdbcLockProvider.ddl("postgresql", "jobs")).contains("CREATE TABLE IF NOT EXISTS jobs_names", "COLLATE \"C\"")
                .doesNotContain("latchkey_");
        assertThat(JdbcLockProvider.ddl("mariadb", "latchkey")).contains("latchkey_holders", "utf8mb4_nopad_bin");
        assertThatThrownBy(() -> JdbcLockProvider.ddl("postgresql", "Bad Name")).isInstanceOf(IllegalArgumentException.class);
    }
}
