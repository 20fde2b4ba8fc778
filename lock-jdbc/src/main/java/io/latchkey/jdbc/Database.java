package io.latchkey.jdbc;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;

/**
 * Every call to the database, each bounded: a connection from the pool, the work on it with the
 * driver's network timeout set to what is left of the call's bound, and the errors told as a user can
 * act on them. A silent database (paused, cut off) therefore costs a call its bound and no more: the
 * driver gives up on the socket, and the pool drops the connection.
 *
 * <p>A pool of Latchkey's own (HikariCP) is asked for a connection within what is left of the call's
 * bound. The application's own {@link DataSource} may wait longer, so a connection
 * is asked of it on a thread of the backend and waited for within the call's bound; one that arrives
 * later is closed at once.
 *
 * <p>A call whose connection fails (the server restarted and closed it, or it was cut) runs again on
 * another connection while its bound lasts; a call that got no connection within its bound does not. Every call may run twice: each write is guarded by the
 * grant's owner, so a grant that committed before its connection failed is found again, not taken
 * twice, and a release or renewal repeated changes nothing.
 *
 * <p>A {@link #call} commits each statement as it runs, whatever the connection's autocommit setting:
 * an application's pool may hand out connections with autocommit off (HikariCP's {@code autoCommit=false},
 * common with Spring and JPA), and would roll back on return a grant, renewal or release that was never
 * committed, so that the holder would believe it held a lock that another client could take. Such a
 * connection is switched to autocommit for the call and back when it is done, so the pool gets it back
 * as it gave it, with nothing left to commit or roll back. Switching it on, which commits a pending
 * transaction, commits nothing here: the connection was just borrowed, on a thread of the backend (so no
 * transaction bound to an application's thread comes with it), and Latchkey has run nothing on it yet.
 * Latchkey's own pool keeps autocommit on, and is left alone.
 *
 * <p>Thread-safe.
 */
final class Database {

    /** Work on one connection. */
    interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    /** The pause before a call runs again on another connection after its connection failed. */
    private static final long RETRY_MILLIS = 50;

    private final DataSource dataSource;
    private final boolean ownPool;
    final Dialect dialect;
    /** Where the tables live, for messages: the redacted URI, or the application's DataSource. */
    final String where;
    final Tables tables;
    private final Duration timeout;
    private final ExecutorService threads;

    Database(DataSource dataSource, boolean ownPool, Dialect dialect, String where, Tables tables, Duration timeout,
            ExecutorService threads) {
        this.dataSource = dataSource;
        this.ownPool = ownPool;
        this.dialect = dialect;
        this.where = where;
        this.tables = tables;
        this.timeout = timeout;
        this.threads = threads;
    }

    Duration timeout() {
        return timeout;
    }

    Executor executor() {
        return threads;
    }

    /**
     * Runs {@code work} on a connection in autocommit mode (switched on for the call where the
     * application's pool gave it off), within {@code bound}, again at once after a deadlock the database
     * broke.
     *
     * @param lockName the lock the call is for, for the exception
     * @param what what the call does, for messages: "the acquire of lock 'x'"
     */
    <T> T call(String lockName, String what, Deadline bound, Work<T> work) throws InterruptedException {
        return run(lockName, what, bound, false, work);
    }

    /** {@link #call}, as one transaction at READ COMMITTED, rolled back if {@code work} throws. */
    <T> T transaction(String lockName, String what, Deadline bound, Work<T> work) throws InterruptedException {
        return run(lockName, what, bound, true, work);
    }

    private <T> T run(String lockName, String what, Deadline bound, boolean transaction, Work<T> work)
            throws InterruptedException {
        while (true) {
            Connection borrowed;
            try {
                borrowed = connection(lockName, what, bound);
            } catch (SQLException e) {
                // the pool waited out the bound, or the application's DataSource failed at once: not tried again
                throw failure(lockName, what, bound, e);
            }
            try (Connection c = borrowed) {
                int previousTimeout = ownPool ? -1 : c.getNetworkTimeout();
                long left = bound.remainingMillis();
                if (left <= 0) {
                    throw unavailable(lockName, what, bound, null);
                }
                c.setNetworkTimeout(threads, (int) Math.min(Integer.MAX_VALUE, left));
                // see the class's javadoc: what a call writes must not wait for a commit that never comes
                boolean autoCommitOff = !ownPool && !transaction && !c.getAutoCommit();
                try {
                    if (autoCommitOff) {
                        c.setAutoCommit(true);
                    }
                    return transaction ? inTransaction(c, work) : work.run(c);
                } finally {
                    if (!ownPool && !c.isClosed()) {
                        if (autoCommitOff) {
                            c.setAutoCommit(false);
                        }
                        c.setNetworkTimeout(threads, previousTimeout);
                    }
                }
            } catch (SQLException e) {
                if (dialect.isRetryable(e) && !bound.hasPassed()) {
                    continue; // the database chose this transaction as a deadlock's victim: nothing of it is left
                }
                if (dialect.isConnectionFailure(e) && bound.remainingMillis() > RETRY_MILLIS) {
                    // a pooled connection the server closed (a restart) fails at its first use: the work is
                    // idempotent (every write is guarded by the grant's owner), so it runs again on another
                    Thread.sleep(RETRY_MILLIS);
                    continue;
                }
                throw failure(lockName, what, bound, e);
            }
        }
    }

    private static <T> T inTransaction(Connection c, Work<T> work) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        int isolation = c.getTransactionIsolation();
        c.setAutoCommit(false);
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        try {
            T result = work.run(c);
            c.commit();
            return result;
        } catch (SQLException | RuntimeException e) {
            try {
                c.rollback();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        } finally {
            if (!c.isClosed()) {
                c.setTransactionIsolation(isolation);
                c.setAutoCommit(autoCommit);
            }
        }
    }

    /** A connection of the pool, within {@code bound}. */
    Connection connection(String lockName, String what, Deadline bound) throws SQLException, InterruptedException {
        if (ownPool) {
            // HikariCP's own bound, the call's rest: its connectionTimeout (the timeout option) may be more
            HikariPool pool = (HikariPool) ((HikariDataSource) dataSource).getHikariPoolMXBean();
            return pool.getConnection(Math.max(1, bound.remainingMillis()));
        }
        CompletableFuture<Connection> borrowed = CompletableFuture.supplyAsync(() -> {
            try {
                return dataSource.getConnection();
            } catch (SQLException e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        }, threads);
        try {
            return borrowed.get(Math.max(1, bound.remainingNanos()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            borrowed.thenAccept(Database::closeQuietly); // a connection that comes too late goes back at once
            throw unavailable(lockName, what + " (no connection from the application's DataSource)", bound, e);
        } catch (InterruptedException e) {
            borrowed.thenAccept(Database::closeQuietly);
            throw e;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof SQLException sql) {
                throw sql;
            }
            throw unavailable(lockName, what, bound, e.getCause());
        }
    }

    static void closeQuietly(AutoCloseable closeable) {
        if (closeable != null) {
            try {
                closeable.close();
            } catch (Exception e) {
                // closing anyway
            }
        }
    }

    /** What an {@link SQLException} of a call within {@code bound} means for the user. */
    LockException failure(String lockName, String what, Deadline bound, SQLException e) {
        if (dialect.isMissingTable(e)) {
            return new LockException(lockName, what + " failed: " + tables.missing(where, dialect) + " (" + e.getMessage()
                    + ")", e);
        }
        if (dialect.isDenied(e)) {
            return new LockException(lockName, what + " was refused by " + where + ": " + e.getMessage() + "; "
                    + tables.grantAdvice(dialect), e);
        }
        return unavailable(lockName, what, bound, e);
    }

    /**
     * A call within {@code bound} that the database did not serve, told as it ended: the bound ran out
     * (no answer within the timeout), the call was interrupted, or it failed at once: no connection, or
     * an error of the database ({@code cause}).
     */
    LockBackendUnavailableException unavailable(String lockName, String what, Deadline bound, Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof InterruptedException) { // HikariCP tells an interrupted wait as an SQLException
                return interrupted(lockName, what, cause);
            }
        }
        String reason = cause == null ? "" : ": " + reason(cause);
        // a call that gave up with no more than a retry's pause left waited out its bound: a connection
        // that keeps failing is tried again until then
        if (bound.remainingMillis() <= RETRY_MILLIS) {
            return new LockBackendUnavailableException(lockName, dialect + " database " + where + " did not complete "
                    + what + " within " + Durations.format(timeout) + reason + "; check that it runs and is reachable",
                    cause);
        }
        if (!(cause instanceof SQLException sql) || dialect.isConnectionFailure(sql)) {
            return new LockBackendUnavailableException(lockName, what + " failed: could not connect to " + dialect
                    + " database " + where + reason + "; check that it runs and accepts connections", cause);
        }
        String state = sql.getSQLState() == null ? "" : " (SQL state " + sql.getSQLState() + ")";
        return new LockBackendUnavailableException(lockName, what + " failed on " + dialect + " database " + where + reason
                + state + "; check that Latchkey's tables " + tables.names() + " and " + tables.holders() + " match its DDL"
                + " (io/latchkey/jdbc/schema-" + dialect + ".sql) and that the database takes writes", cause);
    }

    /** A call that was interrupted before the database answered: it may have taken effect or not. */
    LockBackendUnavailableException interrupted(String lockName, String what, Throwable cause) {
        return new LockBackendUnavailableException(lockName, what + " was interrupted before " + dialect + " database "
                + where + " answered; it may or may not have taken effect", cause);
    }

    /**
     * The cause's message on one line, without a closing full stop: a server's error may add lines
     * (PostgreSQL's position and hint).
     */
    private static String reason(Throwable cause) {
        String message = cause.getMessage() == null ? cause.toString() : cause.getMessage();
        String line = message.strip().replaceAll("\\s*\\R\\s*", " ");
        return line.endsWith(".") ? line.substring(0, line.length() - 1) : line;
    }
}
