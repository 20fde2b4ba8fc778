package io.latchkey.jdbc;

import io.latchkey.GrantTime;
import io.latchkey.spi.GrantRecord;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The statements of semaphores and read-write locks, whose grants are rows of
 * {@code <namespace>_holders} beside one row of the name in {@code <namespace>_names}.
 *
 * <p><b>A grant is one short transaction at READ COMMITTED</b> that first locks the name's row
 * ({@link #lockName}: created if missing, locked in the same statement). Every grant of the name takes
 * that lock first and keeps it until it commits, so grants of one name run one after the other, and
 * each statement after the lock sees every grant committed before it (READ COMMITTED reads the latest
 * committed rows per statement; a snapshot taken before the lock, as REPEATABLE READ's would be, could
 * miss one). Releases and renewals touch only their own holder row, without the name's lock: the
 * transaction deletes expired holder rows with a {@code DELETE ... WHERE expires_ms <= now}, which the
 * database evaluates on the latest version of each row, so a renewal that committed first keeps its
 * row, and one that comes after finds the row gone and reports the loss. A release that the
 * transaction does not see yet only makes it wait, never grant twice.
 */
final class HolderRows {

    private final Tables tables;
    private final Dialect dialect;
    private final String now;

    HolderRows(Tables tables, Dialect dialect) {
        this.tables = tables;
        this.dialect = dialect;
        this.now = dialect.now;
    }

    /** The name's row, locked until the transaction ends: its token, permits and waiting writer. */
    record NameRow(long token, Integer permits, String waitingWriter, long waitingLeftMillis) {
    }

    /** A held row of the holders table. */
    record Held(char kind, long slot, String owner, long token, long leftMillis, String holder, long sinceMillis) {
        GrantRecord record() {
            return new GrantRecord(holder, token, Duration.ofMillis(leftMillis), -1,
                    new GrantTime(Instant.ofEpochMilli(sinceMillis), GrantTime.Source.BACKEND_AT_GRANT));
        }
    }

    NameRow lockName(Connection c, char kind, String name, Integer permits) throws SQLException {
        String t = tables.names();
        String insert = "INSERT INTO " + t + " (kind, name, token, permits) VALUES (?, ?, 0, ?)";
        String upsert = dialect == Dialect.POSTGRESQL
                ? insert + " ON CONFLICT (kind, name) DO UPDATE SET token = " + t + ".token"
                : insert + " ON DUPLICATE KEY UPDATE token = token";
        try (PreparedStatement s = c.prepareStatement(upsert)) {
            s.setString(1, String.valueOf(kind));
            s.setString(2, name);
            if (permits == null) {
                s.setNull(3, java.sql.Types.INTEGER);
            } else {
                s.setInt(3, permits);
            }
            s.executeUpdate();
        }
        try (PreparedStatement s = c.prepareStatement("SELECT token, permits, waiting_writer, waiting_until_ms - " + now
                + " FROM " + t + " WHERE kind = ? AND name = ?")) {
            s.setString(1, String.valueOf(kind));
            s.setString(2, name);
            try (ResultSet r = s.executeQuery()) {
                r.next();
                int p = r.getInt(2);
                Integer read = r.wasNull() ? null : p;
                return new NameRow(r.getLong(1), read, r.getString(3), r.getLong(4));
            }
        }
    }

    /** Deletes the expired holder rows of the name: their holders learn the loss at their next renewal. */
    void dropExpired(Connection c, String kinds, String name) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("DELETE FROM " + tables.holders() + " WHERE kind IN (" + kinds + ")"
                + " AND name = ? AND expires_ms <= " + now)) {
            s.setString(1, name);
            s.executeUpdate();
        }
    }

    /** The held (unexpired) rows of the name, of the given kinds ({@code 'S'}, or {@code 'R','W'}). */
    List<Held> held(Connection c, String kinds, String name) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT kind, slot, owner, token, expires_ms - " + now + ", holder,"
                + " since_ms FROM " + tables.holders() + " WHERE kind IN (" + kinds + ") AND name = ? AND expires_ms > " + now
                + " ORDER BY slot")) {
            s.setString(1, name);
            List<Held> held = new ArrayList<>();
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    held.add(new Held(r.getString(1).charAt(0), r.getLong(2), r.getString(3), r.getLong(4), r.getLong(5),
                            r.getString(6), r.getLong(7)));
                }
            }
            return held;
        }
    }

    /** Draws the name's next token (the name's row is locked by this transaction) and inserts the holder row. */
    long insert(Connection c, char nameKind, char kind, String name, long slot, String owner, long leaseMillis,
            String holder, long previousToken) throws SQLException {
        long token = previousToken + 1;
        try (PreparedStatement s = c.prepareStatement("UPDATE " + tables.names() + " SET token = ? WHERE kind = ? AND name = ?")) {
            s.setLong(1, token);
            s.setString(2, String.valueOf(nameKind));
            s.setString(3, name);
            s.executeUpdate();
        }
        try (PreparedStatement s = c.prepareStatement("INSERT INTO " + tables.holders() + " (kind, name, slot, owner, token,"
                + " expires_ms, holder, since_ms) VALUES (?, ?, ?, ?, ?, " + now + " + ?, ?, " + now + ")")) {
            s.setString(1, String.valueOf(kind));
            s.setString(2, name);
            s.setLong(3, slot < 0 ? token : slot);
            s.setString(4, owner);
            s.setLong(5, token);
            s.setLong(6, leaseMillis);
            s.setString(7, holder);
            s.executeUpdate();
        }
        return token;
    }

    /** Sets the semaphore's number of permits; only while none is held. */
    void setPermits(Connection c, String name, int permits) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("UPDATE " + tables.names() + " SET permits = ? WHERE kind = 'S'"
                + " AND name = ?")) {
            s.setInt(1, permits);
            s.setString(2, name);
            s.executeUpdate();
        }
    }

    /** Marks {@code owner} as the writer that waits, for {@code leaseMillis} on the database's clock; or clears it. */
    void setWaitingWriter(Connection c, String name, String owner, long leaseMillis) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("UPDATE " + tables.names() + " SET waiting_writer = ?,"
                + " waiting_until_ms = " + (owner == null ? "NULL" : now + " + ?") + " WHERE kind = 'W' AND name = ?")) {
            int i = 1;
            s.setString(i++, owner);
            if (owner != null) {
                s.setLong(i++, leaseMillis);
            }
            s.setString(i, name);
            s.executeUpdate();
        }
    }

    /** Clears the waiting writer if it is still {@code owner}: a writer that gave up. */
    void clearWaitingWriter(Connection c, String name, String owner) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("UPDATE " + tables.names() + " SET waiting_writer = NULL,"
                + " waiting_until_ms = NULL WHERE kind = 'W' AND name = ? AND waiting_writer = ?")) {
            s.setString(1, name);
            s.setString(2, owner);
            s.executeUpdate();
        }
    }

    /**
     * Writes or refreshes a lock waiter's row (kind {@code Q}), expiring {@code leaseMillis} from the
     * database's now; the first write also deletes the name's expired waiter rows (of crashed waiters).
     */
    void queue(Connection c, String name, long slot, String owner, long leaseMillis, boolean first) throws SQLException {
        if (first) {
            try (PreparedStatement s = c.prepareStatement("DELETE FROM " + tables.holders() + " WHERE kind = 'Q' AND name = ?"
                    + " AND expires_ms <= " + now)) {
                s.setString(1, name);
                s.executeUpdate();
            }
            try (PreparedStatement s = c.prepareStatement("INSERT INTO " + tables.holders() + " (kind, name, slot, owner,"
                    + " token, expires_ms, since_ms) VALUES ('Q', ?, ?, ?, 0, " + now + " + ?, " + now + ")")) {
                s.setString(1, name);
                s.setLong(2, slot);
                s.setString(3, owner);
                s.setLong(4, leaseMillis);
                s.executeUpdate();
                return;
            } catch (SQLException e) {
                if (!dialect.isDuplicate(e)) { // a retried insert that had committed: refreshed below
                    throw e;
                }
            }
        }
        try (PreparedStatement s = c.prepareStatement("UPDATE " + tables.holders() + " SET expires_ms = " + now + " + ?"
                + " WHERE kind = 'Q' AND name = ? AND owner = ?")) {
            s.setLong(1, leaseMillis);
            s.setString(2, name);
            s.setString(3, owner);
            s.executeUpdate();
        }
    }

    /** How many waiters of lock {@code name} are counted now. */
    int waiters(Connection c, String name) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT count(*) FROM " + tables.holders() + " WHERE kind = 'Q'"
                + " AND name = ? AND expires_ms > " + now)) {
            s.setString(1, name);
            try (ResultSet r = s.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        }
    }

    /** Deletes the holder row if it still carries {@code owner}; on PostgreSQL notifies the release in the same statement. */
    void release(Connection c, char kind, String name, String owner, String wakeKey) throws SQLException {
        tables.writeAndNotify(c, dialect, "DELETE FROM " + tables.holders() + " WHERE kind = ? AND name = ? AND owner = ?",
                wakeKey, String.valueOf(kind), name, owner);
    }

    /** The semaphore's permits as recorded, or null if it has no row. */
    Integer permits(Connection c, String name) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT permits FROM " + tables.names() + " WHERE kind = 'S' AND name = ?")) {
            s.setString(1, name);
            try (ResultSet r = s.executeQuery()) {
                if (!r.next()) {
                    return null;
                }
                int p = r.getInt(1);
                return r.wasNull() ? null : p;
            }
        }
    }

    /** The held slots below {@code permits}, by slot. */
    Map<Integer, GrantRecord> slots(List<Held> held, int permits) {
        Map<Integer, GrantRecord> slots = new TreeMap<>();
        for (Held h : held) {
            if (h.slot() < permits) {
                slots.put((int) h.slot(), h.record());
            }
        }
        return slots;
    }
}
