package io.latchkey.jdbc;

import io.latchkey.spi.Deadline;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renews every row this client holds, once a tick (a third of the lease, from the start of one tick to
 * the start of the next, or at once after a tick that took longer), on one thread and one
 * connection: on PostgreSQL one statement per table for all of them ({@code owner = ANY(?)} ...
 * {@code RETURNING owner}), so that a client holding a thousand locks sends two statements a tick; on
 * MariaDB and MySQL, which return nothing from an {@code UPDATE}, one statement per row, sent together
 * in batches of {@value #BATCH} (one round trip each on MariaDB, whose driver pipelines a batch).
 *
 * <p>Each renewal sets the row's expiry to the database's clock plus the lease, only while the row
 * still carries the grant's owner and has not expired; the time taken before the statement was sent
 * is what the evidence is confirmed from. A row the statement did not renew is lost: it expired or
 * another client ended it (an administrator's force release, a takeover after expiry). A statement
 * that fails reports nothing: silence is not loss, and the validity deadline runs out on its own.
 */
final class Renewer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Renewer.class);

    /** The most rows one JDBC batch of MariaDB's or MySQL's renewals holds. */
    static final int BATCH = 500;

    private final JdbcLockBackend backend;
    private final Set<RowLease> held = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService ticks;
    private final long leaseMillis;
    /** A third of the lease, between the starts of two ticks. */
    private final long periodNanos;
    /** The connection a tick renews on, while it does: close ends it if the tick does not end by itself. */
    private volatile java.sql.Connection inUse;

    Renewer(JdbcLockBackend backend, Duration lease, ThreadFactory threads) {
        this.backend = backend;
        this.leaseMillis = lease.toMillis();
        this.ticks = Executors.newSingleThreadScheduledExecutor(threads);
        this.periodNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(1, leaseMillis / 3));
        ticks.schedule(this::run, periodNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Runs a tick and schedules the next a period after this one began, or at once if this one took
     * longer. A tick renews the rows confirmed longest ago first, so a row keeps its place from tick to
     * tick and one granted during a tick comes in the next where its grant puts it: the time between two
     * confirmations of a row is about the longer of the period and a tick's duration. Before, the next
     * tick waited a period after this one ended and took the rows in the set's order, so a row could
     * wait two ticks and the period; a tick of 10,000 rows on a loaded machine took long enough for that
     * to pass the lease less the margin (seen: 155 of 10,000 held locks lost in
     * {@code MariaDbOperationCountTest}). A tick that overran is not made up for by ticks run back to
     * back.
     */
    private void run() {
        long start = System.nanoTime();
        try {
            tick();
        } finally {
            try {
                ticks.schedule(this::run, Math.max(0, periodNanos - (System.nanoTime() - start)), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                // closed
            }
        }
    }

    void add(RowLease lease) {
        held.add(lease);
    }

    void remove(RowLease lease) {
        held.remove(lease);
    }

    private void tick() {
        if (held.isEmpty()) {
            return;
        }
        List<RowLease> locks = new ArrayList<>();
        List<RowLease> holders = new ArrayList<>();
        for (RowLease l : held) {
            (l.kind == 'L' ? locks : holders).add(l);
        }
        // the stalest first: see run()
        long now = System.nanoTime();
        Comparator<RowLease> stalest = Comparator.comparingLong(l -> l.confirmedAt() - now);
        locks.sort(stalest);
        holders.sort(stalest);
        Database db = backend.db;
        try {
            if (db.dialect == Dialect.POSTGRESQL) {
                db.call(null, "the renewal of " + held.size() + " held grants", Deadline.after(db.timeout()), c -> {
                    inUse = c;
                    renewAll(c, backend.tables.names(), locks);
                    renewAll(c, backend.tables.holders(), holders);
                    return null;
                });
            } else {
                renewEach(db, locks, true);
                renewEach(db, holders, false);
            }
        } catch (RuntimeException e) {
            log.debug("renewal failed; the grants stay valid until their deadlines unless a later renewal answers", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            inUse = null;
        }
    }

    private void renewAll(Connection c, String table, List<RowLease> leases) throws SQLException {
        if (leases.isEmpty()) {
            return;
        }
        String now = backend.db.dialect.now;
        String[] owners = leases.stream().map(l -> l.owner).toArray(String[]::new);
        long sentAt = System.nanoTime();
        Set<String> renewed = new HashSet<>();
        try (PreparedStatement s = c.prepareStatement("UPDATE " + table + " SET expires_ms = " + now + " + ? WHERE owner = ANY(?)"
                + " AND expires_ms > " + now + " RETURNING owner")) {
            s.setLong(1, leaseMillis);
            Array array = c.createArrayOf("varchar", owners);
            s.setArray(2, array);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    renewed.add(r.getString(1));
                }
            }
        }
        for (RowLease l : leases) {
            report(l, renewed.contains(l.owner), sentAt);
        }
    }

    /**
     * MariaDB and MySQL: one statement per row, in JDBC batches of at most {@value #BATCH} that the
     * driver sends together (MariaDB's pipelines them), each batch a call of its own within the
     * {@code timeout} option, and a lock's rows in one transaction per batch: one commit, not one per row,
     * which is what a database that flushes its log at every commit needs to renew thousands of rows
     * within a tick. That transaction cannot deadlock: every other writer of a lock's row writes that row
     * alone in its transaction. A holder's rows (permits, read-write grants) are written together with
     * their name's row by the grants of other clients, so they are renewed one commit each. Each row is
     * confirmed from a time before its batch was sent, once the batch returned (a lock's, once committed).
     * A row whose count the driver does not know ({@link Statement#SUCCESS_NO_INFO}, from a bulk batch the
     * application's data source may enable) is renewed again on its own rather than taken as renewed or
     * lost. A batch that fails ends the tick: the rows not renewed stay valid until their deadlines unless
     * the next tick renews them.
     */
    private void renewEach(Database db, List<RowLease> leases, boolean lockRows) throws InterruptedException {
        for (int from = 0; from < leases.size(); from += BATCH) {
            List<RowLease> batch = leases.subList(from, Math.min(leases.size(), from + BATCH));
            String what = "the renewal of " + batch.size() + " held grants";
            Database.Work<int[]> work = c -> {
                inUse = c;
                return execute(c, batch);
            };
            long sentAt = System.nanoTime();
            // reported once the work returned: a lock's rows after their transaction committed
            int[] counts = lockRows ? db.transaction(null, what, Deadline.after(db.timeout()), work)
                    : db.call(null, what, Deadline.after(db.timeout()), work);
            for (int i = 0; i < batch.size(); i++) {
                RowLease l = batch.get(i);
                if (counts[i] >= 0) {
                    report(l, counts[i] > 0, sentAt);
                } else {
                    db.call(null, "the renewal of " + l.where(), Deadline.after(db.timeout()), c -> {
                        inUse = c;
                        renewOne(c, l);
                        return null;
                    });
                }
            }
        }
    }

    private int[] execute(Connection c, List<RowLease> batch) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(renewal(batch.get(0)))) {
            for (RowLease l : batch) {
                bind(s, l);
                s.addBatch();
            }
            return s.executeBatch();
        }
    }

    private void renewOne(Connection c, RowLease l) throws SQLException {
        long sentAt = System.nanoTime();
        int updated;
        try (PreparedStatement s = c.prepareStatement(renewal(l))) {
            bind(s, l);
            updated = s.executeUpdate();
        }
        report(l, updated > 0, sentAt);
    }

    /** The renewal of one row like {@code l}'s: a lock's row of the names table, or a row of the holders table. */
    private String renewal(RowLease l) {
        String now = backend.db.dialect.now;
        return l.kind == 'L'
                ? "UPDATE " + backend.tables.names() + " SET expires_ms = " + now + " + ? WHERE kind = 'L' AND name = ?"
                        + " AND owner = ? AND expires_ms > " + now
                : "UPDATE " + backend.tables.holders() + " SET expires_ms = " + now + " + ? WHERE owner = ? AND expires_ms > "
                        + now;
    }

    private void bind(PreparedStatement s, RowLease l) throws SQLException {
        s.setLong(1, leaseMillis);
        if (l.kind == 'L') {
            s.setString(2, l.name);
            s.setString(3, l.owner);
        } else {
            s.setString(2, l.owner);
        }
    }

    private void report(RowLease l, boolean renewed, long sentAt) {
        if (!held.contains(l)) {
            return; // released meanwhile: its row may be gone for that reason
        }
        if (renewed) {
            l.confirmed(sentAt, leaseMillis);
        } else {
            log.warn("{}: the row no longer carries this grant (it expired, or was ended by another client)", l.where());
            held.remove(l);
            l.evidence.lost(l.where() + " no longer carries this grant: it expired on the database's clock, or another"
                    + " client ended it", null);
        }
    }

    @Override
    public void close() {
        ticks.shutdownNow();
        try {
            if (!ticks.awaitTermination(1, TimeUnit.SECONDS)) {
                // a tick waits for a database that does not answer: its renewal no longer matters
                java.sql.Connection c = inUse;
                if (c != null) {
                    try {
                        c.abort(Runnable::run);
                    } catch (SQLException | RuntimeException e) {
                        // closing anyway
                    }
                }
                ticks.awaitTermination(backend.db.timeout().toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
