package io.latchkey.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * The raw JDBC lock clients Latchkey's JDBC backend is compared with, on the same database
 * ({@code postgresql://} or {@code mariadb://} URIs of the kit's fixtures): ShedLock's
 * {@code JdbcTemplateLockProvider} with {@code usingDbTime()}, and Spring Integration's
 * {@code JdbcLockRegistry} on a {@code DefaultLockRepository}. Each client has a HikariCP pool of its
 * own, sized as Latchkey's own pool is by default (4 connections, 1 kept idle), and its tables are
 * created from the DDL its project documents or ships, once per JVM.
 *
 * <p>Names are prefixed with {@code bench:}, as the other raw clients' are.
 */
final class JdbcLockers {

    /**
     * How often the ShedLock locker tries again while the lock is held: ShedLock has no wait of its
     * own, so a caller that must have the lock retries; every 100 ms is JdbcLockRegistry's default
     * {@code idleBetweenTries} and Latchkey's default poll on MariaDB.
     */
    static final Duration SHEDLOCK_RETRY = Duration.ofMillis(100);

    /** Latchkey's default pool: {@code poolSize} 4, one connection kept when idle. */
    private static final int POOL_SIZE = 4;
    private static final AtomicInteger POOLS = new AtomicInteger();
    private static final Set<String> TABLES_MADE = new HashSet<>();

    private JdbcLockers() {
    }

    /**
     * ShedLock's {@code JdbcTemplateLockProvider} with {@code usingDbTime()}: {@code lockAtMostFor} is
     * the lease, {@code lockAtLeastFor} zero; a held lock is tried again every {@link #SHEDLOCK_RETRY}
     * until the wait is over.
     */
    static Locker shedLock(Target t) throws SQLException {
        Db db = Db.of(t);
        HikariDataSource pool = db.pool("shedlock");
        try {
            db.createOnce("shedlock", db.postgres() ? SHEDLOCK_POSTGRES : SHEDLOCK_MYSQL);
        } catch (SQLException | RuntimeException e) {
            pool.close();
            throw e;
        }
        JdbcTemplateLockProvider provider = new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
                .withJdbcTemplate(new JdbcTemplate(pool))
                .usingDbTime()
                .build());
        return new Locker() {
            @Override
            public Held acquire(String name, Duration wait) throws InterruptedException {
                long deadline = System.nanoTime() + wait.toNanos();
                while (true) {
                    Optional<SimpleLock> lock = provider.lock(new LockConfiguration(ClockProvider.now(), "bench:" + name,
                            t.lease(), Duration.ZERO));
                    if (lock.isPresent()) {
                        return lock.get()::unlock;
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return null;
                    }
                    TimeUnit.NANOSECONDS.sleep(Math.min(left, SHEDLOCK_RETRY.toNanos()));
                }
            }

            @Override
            public void close() {
                pool.close();
            }
        };
    }

    /**
     * Spring Integration's {@code JdbcLockRegistry} with the lease as its TTL and its defaults otherwise
     * (a waiter tries again every 100 ms), on a {@code DefaultLockRepository} set up as its application
     * context would: a {@code DataSourceTransactionManager}, then its three lifecycle callbacks.
     */
    static Locker springRegistry(Target t) throws SQLException {
        Db db = Db.of(t);
        HikariDataSource pool = db.pool("spring");
        DefaultLockRepository repository;
        try {
            db.createOnce("int_lock", intLockDdl(db.postgres() ? "postgresql" : "mysql"));
            repository = new DefaultLockRepository(pool);
            repository.setTransactionManager(new DataSourceTransactionManager(pool));
            repository.afterPropertiesSet();
            repository.afterSingletonsInstantiated();
            repository.start();
        } catch (SQLException | RuntimeException e) {
            pool.close();
            throw e;
        }
        JdbcLockRegistry registry = new JdbcLockRegistry(repository, t.lease());
        return new Locker() {
            @Override
            public Held acquire(String name, Duration wait) throws InterruptedException {
                Lock lock = registry.obtain("bench:" + name);
                return lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS) ? lock::unlock : null;
            }

            @Override
            public void close() {
                try {
                    repository.close();
                } finally {
                    pool.close();
                }
            }
        };
    }

    /**
     * The statements PostgreSQL has run in the URI's database so far, as {@code pg_stat_statements} counts
     * them (the kit's server preloads it with {@code track = all}), its own queries left out; -1 on
     * MariaDB, not counted.
     */
    static long statements(Target t) throws SQLException {
        Db db = Db.of(t);
        if (!db.postgres()) {
            return -1;
        }
        try (Connection c = DriverManager.getConnection(db.jdbcUrl, db.user, db.password);
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements"
                        + " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
                        + " AND query NOT LIKE '%pg_stat_statements%'")) {
            r.next();
            return r.getLong(1);
        }
    }

    /** The rows of every table of the URI's database (its current schema on PostgreSQL). */
    static long rows(Target t) throws SQLException {
        Db db = Db.of(t);
        try (Connection c = DriverManager.getConnection(db.jdbcUrl, db.user, db.password);
                Statement s = c.createStatement()) {
            List<String> tables = new ArrayList<>();
            try (ResultSet r = s.executeQuery("SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
                    + " AND table_schema = " + (db.postgres() ? "current_schema()" : "database()"))) {
                while (r.next()) {
                    tables.add(r.getString(1));
                }
            }
            long n = 0;
            for (String table : tables) {
                try (ResultSet r = s.executeQuery("SELECT count(*) FROM " + table)) {
                    r.next();
                    n += r.getLong(1);
                }
            }
            return n;
        }
    }

    // ShedLock's documented tables: PostgreSQL's TIMESTAMP keeps microseconds; on MySQL and MariaDB it
    // keeps whole seconds unless given (3), which its docs do, as lock_until must hold milliseconds
    private static final String SHEDLOCK_POSTGRES = "CREATE TABLE IF NOT EXISTS shedlock(name VARCHAR(64) NOT NULL,"
            + " lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL,"
            + " PRIMARY KEY (name))";
    private static final String SHEDLOCK_MYSQL = "CREATE TABLE IF NOT EXISTS shedlock(name VARCHAR(64) NOT NULL,"
            + " lock_until TIMESTAMP(3) NOT NULL, locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),"
            + " locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))";

    /** The {@code INT_LOCK} table of the schema script spring-integration-jdbc ships for {@code database}. */
    static String intLockDdl(String database) {
        String resource = "org/springframework/integration/jdbc/schema-" + database + ".sql";
        String script;
        try (InputStream in = DefaultLockRepository.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("spring-integration-jdbc has no " + resource + " on the class path");
            }
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + resource + ": " + e, e);
        }
        Matcher m = Pattern.compile("CREATE TABLE INT_LOCK\\b[^;]*", Pattern.CASE_INSENSITIVE).matcher(script);
        if (!m.find()) {
            throw new IllegalStateException(resource + " has no CREATE TABLE INT_LOCK statement");
        }
        return m.group().replaceFirst("(?i)^CREATE TABLE", "CREATE TABLE IF NOT EXISTS");
    }

    /** The database of a {@code postgresql://} or {@code mariadb://} URI, as JDBC reaches it. */
    private record Db(String scheme, String jdbcUrl, String user, String password) {

        static Db of(Target t) {
            URI u = URI.create(t.uri().replaceFirst("\\?.*$", ""));
            String scheme = u.getScheme().toLowerCase(Locale.ROOT);
            String info = u.getRawUserInfo() == null ? "" : u.getRawUserInfo();
            int colon = info.indexOf(':');
            String user = decode(colon < 0 ? info : info.substring(0, colon));
            String password = colon < 0 ? null : decode(info.substring(colon + 1));
            String jdbc = switch (scheme) {
                case "postgresql" -> "jdbc:postgresql://";
                case "mariadb", "mysql" -> "jdbc:mariadb://";
                default -> throw new IllegalArgumentException("not a JDBC backend's URI: '" + scheme + "://'; use postgresql:// or mariadb://");
            };
            return new Db(scheme, jdbc + u.getHost() + ":" + u.getPort() + u.getPath(), user, password);
        }

        boolean postgres() {
            return scheme.equals("postgresql");
        }

        HikariDataSource pool(String what) {
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(jdbcUrl);
            config.setUsername(user);
            config.setPassword(password);
            config.setPoolName("bench-" + what + "-" + POOLS.incrementAndGet());
            config.setMaximumPoolSize(POOL_SIZE);
            config.setMinimumIdle(1);
            return new HikariDataSource(config);
        }

        // the scenarios open clients in parallel, and concurrent CREATE TABLE IF NOT EXISTS can fail on PostgreSQL
        void createOnce(String table, String ddl) throws SQLException {
            synchronized (TABLES_MADE) {
                if (TABLES_MADE.add(jdbcUrl + " " + table)) {
                    try (Connection c = DriverManager.getConnection(jdbcUrl, user, password);
                            Statement s = c.createStatement()) {
                        s.execute(ddl);
                    } catch (SQLException | RuntimeException e) {
                        TABLES_MADE.remove(jdbcUrl + " " + table);
                        throw e;
                    }
                }
            }
        }

        private static String decode(String s) {
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        }
    }
}
