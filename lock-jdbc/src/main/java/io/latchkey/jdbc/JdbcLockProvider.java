package io.latchkey.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.LockClients;
import io.latchkey.spi.LockProviderFactory;
import io.latchkey.spi.LockUri;
import io.latchkey.spi.Startup;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * The JDBC provider of Latchkey: URIs {@code postgresql://user:password@host:5432/database?lease=10s} and
 * {@code mariadb://user:password@host:3306/database} (or {@code mysql://}), served by the application's
 * JDBC driver ({@code org.postgresql:postgresql}, {@code org.mariadb.jdbc:mariadb-java-client}) through
 * a HikariCP pool of Latchkey's own; or {@link #client(DataSource, LockOptions)} on the application's own
 * {@link DataSource}.
 *
 * <p>Locks are rows of {@code <namespace>_names} whose expiry the database computes; see
 * {@link JdbcLockBackend}. How the options map onto the database:
 * <ul>
 *   <li>{@code lease}: a row expires {@code lease} after its last renewal by the database's clock; the
 *       holder renews every third of it, and its validity runs from the moment it sent the renewal.</li>
 *   <li>{@code timeout}: bounds every statement (the driver's network timeout) and the wait for a pooled
 *       connection (HikariCP's {@code connectionTimeout}).</li>
 *   <li>{@code namespace}: the tables' prefix (default {@value Tables#DEFAULT_NAMESPACE}), a lower-case SQL
 *       identifier; the URI's path is the database.</li>
 *   <li>{@value #POLL_INTERVAL}: how long a waiter sleeps at most before it looks again (default
 *       {@code 1s} on PostgreSQL, where releases notify; {@code 100ms} on MariaDB and MySQL, where they
 *       cannot; a quarter of the lease where that is shorter): the bound on a hand-over to a waiter of
 *       another client that no notification carried. Given, it must be shorter than half the lease.</li>
 *   <li>{@value #POOL_SIZE}: the connections of Latchkey's own pool (default {@value #DEFAULT_POOL_SIZE}),
 *       plus one that listens on PostgreSQL. A connection is taken per statement, never per lock.</li>
 *   <li>{@value #CREATE_TABLES}: whether to create the tables when they are missing (default true); with
 *       {@code false}, or a user that may not create them, a missing table is one error at connect that
 *       names it and gives the DDL (shipped as {@code io/latchkey/jdbc/schema-<database>.sql}).</li>
 *   <li>{@code sslmode}, {@code sslrootcert}: PostgreSQL's TLS settings, passed to its driver as libpq
 *       takes them ({@code sslmode=verify-full&sslrootcert=/path/ca.pem}).</li>
 * </ul>
 *
 * <p>Several hosts ({@code postgresql://h1:5432,h2:5432/db}) are tried in order, and on PostgreSQL only
 * a primary is used. Thread-safe and stateless.
 */
public final class JdbcLockProvider implements LockProviderFactory {

    public static final String POLL_INTERVAL = "pollInterval";
    public static final String POOL_SIZE = "poolSize";
    public static final String CREATE_TABLES = "createTables";
    public static final String SSLMODE = "sslmode";
    public static final String SSLROOTCERT = "sslrootcert";
    static final int DEFAULT_POOL_SIZE = 4;

    private static final AtomicInteger CLIENTS = new AtomicInteger();
    private static final Startup STARTUP = new Startup();
    /** PostgreSQL's SSLRequest: the server answers one byte, S or N. MariaDB speaks first, to any bytes. */
    private static final byte[] POSTGRES_HELLO = {0, 0, 0, 8, 4, (byte) 0xd2, 0x16, 0x2f};

    /** A public no-argument constructor for {@link java.util.ServiceLoader}; it does nothing. */
    public JdbcLockProvider() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("postgresql", "mariadb", "mysql");
    }

    @Override
    public Set<String> backendOptions() {
        return Set.of(POLL_INTERVAL, POOL_SIZE, CREATE_TABLES, SSLMODE, SSLROOTCERT);
    }

    @Override
    public int defaultPort(String scheme) {
        return scheme.equals("postgresql") ? 5432 : 3306;
    }

    @Override
    public LockBackend connect(LockUri uri, LockOptions options) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(options, "options");
        Dialect dialect = Dialect.ofScheme(uri.scheme());
        String where = uri.redacted();
        Tables tables = Tables.of(options.namespace(), where);
        String database = uri.path().startsWith("/") ? uri.path().substring(1) : uri.path();
        if (database.isEmpty() || database.contains("/")) {
            throw new IllegalArgumentException("the URI " + where + " names no database: write " + uri.scheme()
                    + "://user:password@host:" + defaultPort(uri.scheme()) + "/<database>");
        }
        Duration poll = pollInterval(options, dialect, where);
        int poolSize = poolSize(options, where);
        boolean create = createTables(options, where);
        String url = jdbcUrl(uri, dialect, database, options, where);
        Deadline deadline = Deadline.after(options.timeout());
        try {
            Startup.probe(uri.hosts(), deadline, dialect == Dialect.POSTGRESQL ? POSTGRES_HELLO : new byte[0],
                    dialect.toString());
        } catch (Startup.NoAnswer e) {
            throw new LockBackendUnavailableException("", "cannot reach " + uri.scheme() + " at " + where + " within "
                    + Durations.format(options.timeout()) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendUnavailableException("", "interrupted while connecting to " + where, e);
        }
        int n = CLIENTS.incrementAndGet();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(options.username());
        config.setPassword(options.password());
        config.setPoolName("latchkey-jdbc-" + n);
        config.setThreadFactory(DaemonThreads.factory("latchkey-jdbc-" + n + "-pool"));
        config.setMaximumPoolSize(poolSize + (dialect.notifies() ? 1 : 0));
        config.setMinimumIdle(1);
        long timeoutMillis = Math.max(250, options.timeout().toMillis());
        config.setConnectionTimeout(timeoutMillis);
        config.setValidationTimeout(Math.max(250, Math.min(1000, timeoutMillis / 4))); // a borrow validates an idle connection
        config.setInitializationFailTimeout(Math.max(1, deadline.remainingMillis() + STARTUP.allowance().toMillis()));
        HikariDataSource pool;
        try {
            pool = new HikariDataSource(config);
        } catch (HikariPool.PoolInitializationException e) {
            throw connectFailure(dialect, where, tables, e.getCause() instanceof SQLException sql ? sql : null, e);
        }
        try {
            Deadline bound = Deadline.after(options.timeout()); // for the first connection and the tables' check
            Dialect found = detect(pool, dialect, where, tables, bound);
            JdbcLockBackend backend = open(pool, true, found, where, tables, options, poll, create, n, pool, bound);
            STARTUP.connected();
            return backend;
        } catch (RuntimeException e) {
            pool.close();
            throw e;
        }
    }

    /**
     * A {@link LockClient} on the application's own {@link DataSource} (a pool it already tunes), which
     * it keeps open when the lock client closes: Latchkey borrows a connection per statement, and one
     * for as long as the client lives on PostgreSQL, to listen for releases. The database is recognised
     * from the connection's metadata; {@code options} supply {@code lease}, {@code safetyMargin},
     * {@code timeout}, {@code namespace} and the backend options {@value #POLL_INTERVAL} and
     * {@value #CREATE_TABLES} (the pool's own settings, its size among them, are the application's). Its
     * connections may come with autocommit off: Latchkey commits what it writes all the same, and gives
     * them back with autocommit off.
     *
     * @throws IllegalArgumentException if an option is bad, or the tables are missing and cannot be created
     * @throws io.latchkey.LockBackendUnavailableException if no connection answers within {@code timeout}
     */
    public static LockClient client(DataSource dataSource, LockOptions options) {
        Objects.requireNonNull(dataSource, "dataSource");
        String where = "the application's DataSource";
        LockClients.checkOptions(new JdbcLockProvider(), options, where);
        Tables tables = Tables.of(options.namespace(), where);
        Dialect dialect;
        try (Connection c = dataSource.getConnection()) {
            dialect = dialectOf(c);
        } catch (SQLException e) {
            throw new LockBackendUnavailableException("", "cannot connect through " + where + ": " + e.getMessage(), e);
        }
        int n = CLIENTS.incrementAndGet();
        JdbcLockBackend backend = open(dataSource, false, dialect, where, tables, options,
                pollInterval(options, dialect, where), createTables(options, where), n, null,
                Deadline.after(options.timeout()));
        return LockClients.of(dialect.toString(), backend, options);
    }

    /** The DDL of the tables of namespace {@code namespace} on {@code database} ({@code postgresql}, {@code mariadb}, {@code mysql}). */
    public static String ddl(String database, String namespace) {
        Dialect dialect = Dialect.valueOf(database.toUpperCase(java.util.Locale.ROOT));
        return dialect.ddlFor(Tables.of(namespace, "the DDL").namespace());
    }

    /** The database a connection reaches, from its metadata. */
    private static Dialect dialectOf(Connection c) throws SQLException {
        DatabaseMetaData meta = c.getMetaData();
        return Dialect.ofProduct(meta.getDatabaseProductName(), meta.getDatabaseProductVersion());
    }

    /**
     * The database behind Latchkey's own pool, from a connection of it within {@code bound}: a
     * {@code mysql://} or {@code mariadb://} URI, which {@code assumed} comes from, reaches MariaDB or MySQL.
     */
    private static Dialect detect(HikariDataSource pool, Dialect assumed, String where, Tables tables, Deadline bound) {
        try (Connection c = ((HikariPool) pool.getHikariPoolMXBean()).getConnection(Math.max(1, bound.remainingMillis()))) {
            return dialectOf(c);
        } catch (SQLException e) {
            if (Thread.currentThread().isInterrupted()) { // HikariCP tells an interrupted wait as an SQLException
                throw new LockBackendUnavailableException("", "interrupted while connecting to " + where, e);
            }
            throw connectFailure(assumed, where, tables, e, e);
        }
    }

    /** The backend on {@code dataSource}, once its tables are there, checked within {@code bound}. */
    private static JdbcLockBackend open(DataSource dataSource, boolean ownPool, Dialect dialect, String where,
            Tables tables, LockOptions options, Duration poll, boolean create, int n, AutoCloseable pool, Deadline bound) {
        String prefix = "latchkey-jdbc-" + n;
        ExecutorService threads = Executors.newCachedThreadPool(DaemonThreads.factory(prefix + "-call"));
        Database db = new Database(dataSource, ownPool, dialect, where, tables, options.timeout(), threads);
        try {
            db.call(null, "checking Latchkey's tables in " + where, bound, c -> {
                tables.ensure(c, dialect, create);
                return null;
            });
        } catch (Tables.Missing e) {
            threads.shutdownNow();
            throw new IllegalArgumentException(tables.missing(where, dialect) + "\n(creating them failed: "
                    + e.getMessage() + ")", e.getCause());
        } catch (LockException e) {
            threads.shutdownNow();
            if (e.getCause() instanceof SQLException sql && dialect.isMissingTable(sql)) {
                throw new IllegalArgumentException(tables.missing(where, dialect), e);
            }
            throw e;
        } catch (InterruptedException e) {
            threads.shutdownNow();
            Thread.currentThread().interrupt();
            throw new LockBackendUnavailableException("", "interrupted while connecting to " + where, e);
        }
        ThreadFactory renew = DaemonThreads.factory(prefix + "-renew");
        ThreadFactory listen = DaemonThreads.factory(prefix + "-listen");
        return new JdbcLockBackend(db, dataSource, options, poll, renew, listen, threads, pool);
    }

    private static RuntimeException connectFailure(Dialect dialect, String where, Tables tables, SQLException sql,
            Exception e) {
        if (sql != null && dialect.isDenied(sql)) {
            return new IllegalArgumentException(dialect + " at " + where + " refused the user: " + sql.getMessage()
                    + "; check the user and password in the URI, and that the server's access rules (pg_hba.conf on"
                    + " PostgreSQL, the user's host on MariaDB) admit this connection, TLS or not (sslmode)", e);
        }
        if (sql != null && ("3D000".equals(sql.getSQLState()) || sql.getErrorCode() == 1049)) {
            return new IllegalArgumentException(dialect + " at " + where + " has no such database: " + sql.getMessage()
                    + "; the URI's path names the database", e);
        }
        String reason = sql != null ? sql.getMessage() : e.getMessage();
        return new LockBackendUnavailableException("", "cannot connect to " + dialect + " at " + where + ": " + reason
                + "; check that it runs and accepts connections", e);
    }

    private static String jdbcUrl(LockUri uri, Dialect dialect, String database, LockOptions options, String where) {
        String hosts = uri.hosts().stream().map(h -> h.host() + ":" + h.port()).collect(Collectors.joining(","));
        Map<String, String> params = new TreeMap<>();
        String sslmode = options.backendOption(SSLMODE, null);
        String rootcert = options.backendOption(SSLROOTCERT, null);
        long timeoutSeconds = Math.max(1, (options.timeout().toMillis() + 999) / 1000);
        if (dialect == Dialect.POSTGRESQL) {
            params.put("connectTimeout", String.valueOf(timeoutSeconds));
            params.put("loginTimeout", String.valueOf(timeoutSeconds));
            params.put("tcpKeepAlive", "true");
            params.put("ApplicationName", "latchkey");
            if (uri.hosts().size() > 1) {
                params.put("targetServerType", "primary");
            }
            if (sslmode != null) {
                params.put("sslmode", sslmode);
            }
            if (rootcert != null) {
                params.put("sslrootcert", rootcert);
            }
        } else {
            if (sslmode != null || rootcert != null) {
                throw new IllegalArgumentException("options '" + SSLMODE + "' and '" + SSLROOTCERT + "' are PostgreSQL's;"
                        + " " + where + " is " + uri.scheme() + ": remove them");
            }
            params.put("connectTimeout", String.valueOf(options.timeout().toMillis()));
        }
        String query = params.entrySet().stream()
                .map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        String scheme = dialect == Dialect.POSTGRESQL ? "jdbc:postgresql://"
                : uri.hosts().size() > 1 ? "jdbc:mariadb:sequential://" : "jdbc:mariadb://";
        return scheme + hosts + "/" + database + "?" + query;
    }

    private static Duration pollInterval(LockOptions options, Dialect dialect, String where) {
        String text = options.backendOption(POLL_INTERVAL, null);
        if (text == null) { // the default, within a quarter of the lease for a short one
            Duration poll = dialect.notifies() ? Duration.ofSeconds(1) : Duration.ofMillis(100);
            Duration quarter = options.lease().dividedBy(4);
            return poll.compareTo(quarter) > 0 ? quarter : poll;
        }
        Duration poll = Durations.parse(POLL_INTERVAL, text);
        if (poll.toMillis() < 10 || poll.compareTo(options.lease().dividedBy(2)) >= 0) {
            throw new IllegalArgumentException(POLL_INTERVAL + "=" + Durations.format(poll) + " of " + where + " must be at"
                    + " least 10ms and shorter than half the lease (lease=" + Durations.format(options.lease()) + "): a"
                    + " waiting writer renews its place every " + POLL_INTERVAL);
        }
        return poll;
    }

    private static int poolSize(LockOptions options, String where) {
        String text = options.backendOption(POOL_SIZE, String.valueOf(DEFAULT_POOL_SIZE));
        try {
            int size = Integer.parseInt(text.trim());
            if (size >= 1 && size <= 100) {
                return size;
            }
        } catch (NumberFormatException e) {
            // told below
        }
        throw new IllegalArgumentException(POOL_SIZE + "=" + text + " of " + where + " must be a number of connections"
                + " from 1 to 100; renewals of every held lock share one, so a few are enough");
    }

    private static boolean createTables(LockOptions options, String where) {
        String text = options.backendOption(CREATE_TABLES, "true").trim();
        if (text.equals("true") || text.equals("false")) {
            return Boolean.parseBoolean(text);
        }
        throw new IllegalArgumentException(CREATE_TABLES + "=" + text + " of " + where + " must be true or false");
    }
}
