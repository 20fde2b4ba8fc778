package io.latchkey.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.ThreadFactory;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection per client that {@code LISTEN}s on the namespace's channel, and wakes the waiters of
 * every name a release notifies (the payload is the key, {@code <kind>:<name>}). It holds its
 * connection for as long as the client lives; when the connection fails it opens another after the
 * poll interval and wakes every waiter, since notifications sent meanwhile are lost (each waiter also
 * tries again on its own within the poll interval).
 *
 * <p>The connection is in autocommit mode while it listens: PostgreSQL applies a {@code LISTEN} only
 * when its transaction commits, so on a connection of an application's pool that comes with autocommit
 * off (HikariCP's {@code autoCommit=false}) nothing would be heard, every waiter would wait for its own
 * poll, and the connection would stay idle in transaction for the client's life. As in {@link Database},
 * such a connection is switched to autocommit when it is borrowed, which commits nothing since nothing
 * ran on it yet, and back before it returns to the pool, so the pool gets it back as it gave it.
 *
 * <p>A {@code LISTEN} lasts as long as the database session, not the borrow: a connection given back to
 * an application's pool still listening would be sent every release of every client, and the driver
 * would keep each notification in the connection's memory, read by nobody, for as long as the pool keeps
 * it. So when the listening ends (the client closes, or it failed and another connection will be
 * borrowed) the listener runs {@code UNLISTEN} on a connection still open, while it is still in autocommit
 * mode (an {@code UNLISTEN} too takes effect only at a commit), and takes what the driver received before
 * it. A connection that fails the {@code UNLISTEN} goes back as it is, and the failure that ended the
 * listening, if one did, is the one logged: a broken connection is the pool's to drop (HikariCP does). An
 * {@code UNLISTEN} that gets no answer waits no longer than the connection's own network timeout, and
 * {@link #close()} no longer than its bound, after which it aborts the connection as before.
 *
 * <p>One thread, named {@code latchkey-jdbc-<n>-listen}, stopped by {@link #close()}.
 */
final class PostgresListener implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PostgresListener.class);

    private final DataSource dataSource;
    private final String channel;
    private final Wakeups wakeups;
    private final Duration pollInterval;
    private final Thread thread;
    private volatile Connection connection;
    private volatile boolean closed;

    PostgresListener(DataSource dataSource, String channel, Wakeups wakeups, Duration pollInterval, ThreadFactory threads) {
        this.dataSource = dataSource;
        this.channel = channel;
        this.wakeups = wakeups;
        this.pollInterval = pollInterval;
        this.thread = threads.newThread(this::run);
        thread.start();
    }

    private void run() {
        while (!closed) {
            try (Connection c = dataSource.getConnection()) {
                connection = c;
                if (closed) {
                    return;
                }
                // see the class's javadoc: a LISTEN in a transaction is not heard until a commit that never comes
                boolean autoCommitOff = !c.getAutoCommit();
                try {
                    if (autoCommitOff) {
                        c.setAutoCommit(true);
                    }
                    listen(c);
                } finally {
                    if (autoCommitOff && !c.isClosed()) {
                        c.setAutoCommit(false);
                    }
                }
            } catch (SQLException | RuntimeException e) {
                if (closed) {
                    return;
                }
                log.debug("the LISTEN connection on channel {} failed; opening another in {}", channel, pollInterval, e);
                try {
                    Thread.sleep(pollInterval.toMillis());
                } catch (InterruptedException interrupted) {
                    return;
                }
            } finally {
                connection = null;
            }
        }
    }

    /**
     * {@code LISTEN}s on {@code c} and wakes the waiters of what it hears until closed or {@code c} fails,
     * then {@code UNLISTEN}s if {@code c} is still open.
     */
    private void listen(Connection c) throws SQLException {
        try {
            try (Statement s = c.createStatement()) {
                s.execute("LISTEN " + channel);
            }
            wakeups.wakeAll(); // what was notified before LISTEN is lost: every waiter looks again
            PGConnection pg = c.unwrap(PGConnection.class);
            while (!closed) {
                wake(pg.getNotifications((int) Math.max(1, pollInterval.toMillis())));
            }
        } finally {
            unlisten(c);
        }
    }

    /**
     * Ends {@code c}'s {@code LISTEN}, which belongs to the session and not to the borrow (see the class's
     * javadoc), and takes what the driver received before it. A connection that fails here is given back
     * as it is: how the listening ended stands, and a broken connection is the pool's to drop.
     */
    private void unlisten(Connection c) {
        try {
            if (c.isClosed()) {
                return;
            }
            try (Statement s = c.createStatement()) {
                s.execute("UNLISTEN " + channel);
            }
            wake(c.unwrap(PGConnection.class).getNotifications()); // no wait: only what the driver holds
        } catch (SQLException | RuntimeException e) {
            log.debug("the UNLISTEN on channel {} failed; its connection goes back to the pool as it is", channel, e);
        }
    }

    private void wake(PGNotification[] received) {
        if (received != null) {
            for (PGNotification n : received) {
                wakeups.wake(n.getParameter());
            }
        }
    }

    /** Asks the thread to end, without waiting: {@link #close()} waits. */
    void stopping() {
        closed = true;
    }

    @Override
    public void close() {
        closed = true; // seen within the poll interval, when getNotifications returns
        try {
            thread.join(pollInterval.toMillis() + 1000);
            Connection c = connection;
            if (thread.isAlive() && c != null) {
                // a connection that does not answer (cut, or the server paused) holds the thread: end it
                try {
                    c.abort(Runnable::run);
                } catch (SQLException | RuntimeException e) {
                    // closing anyway
                }
                thread.join(1000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
