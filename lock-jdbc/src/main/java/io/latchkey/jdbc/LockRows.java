package io.latchkey.jdbc;

import io.latchkey.GrantTime;
import io.latchkey.spi.GrantRecord;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The statements of a lock, whose grant lives in its row of {@code <namespace>_names}.
 *
 * <p><b>The grant is one statement</b> that takes the row only when it is free or expired on the
 * database's clock, and bumps its token in the same write. On PostgreSQL an
 * {@code INSERT ... ON CONFLICT DO UPDATE ... WHERE} ({@code RETURNING} the token, and in the same
 * statement the time the holder has left when it is busy); on MariaDB and MySQL an {@code UPDATE ... WHERE}
 * that hands the new token back through {@code LAST_INSERT_ID(expr)}, and an {@code INSERT} the first
 * time a name is used. Either statement locks the row it writes (or the key it inserts) until it
 * commits, and evaluates its condition on the latest committed row, at any isolation level: two
 * grants of one name cannot interleave, so autocommit at the database's default isolation is enough.
 */
final class LockRows {

    private final Tables tables;
    private final Dialect dialect;
    private final String now;

    LockRows(Tables tables, Dialect dialect) {
        this.tables = tables;
        this.dialect = dialect;
        this.now = dialect.now;
    }

    /** A grant's outcome: its token, or else how long the current holder's row has left (0 if unknown). */
    record Attempt(long token, long holderLeftMillis) {
        boolean granted() {
            return token > 0;
        }
    }

    Attempt grant(Connection c, String name, String owner, long leaseMillis, String holder) throws SQLException {
        return dialect == Dialect.POSTGRESQL ? grantPostgres(c, name, owner, leaseMillis, holder)
                : grantMariaDb(c, name, owner, leaseMillis, holder);
    }

    private Attempt grantPostgres(Connection c, String name, String owner, long leaseMillis, String holder) throws SQLException {
        String t = tables.names();
        // the second SELECT sees the row as it was before the statement: the holder's expiry when busy
        try (PreparedStatement s = c.prepareStatement("WITH g AS (INSERT INTO " + t + " AS t (kind, name, token, owner,"
                + " expires_ms, holder, since_ms) VALUES ('L', ?, 1, ?, " + now + " + ?, ?, " + now + ")"
                + " ON CONFLICT (kind, name) DO UPDATE SET token = t.token + 1, owner = EXCLUDED.owner,"
                + " expires_ms = EXCLUDED.expires_ms, holder = EXCLUDED.holder, since_ms = EXCLUDED.since_ms"
                + " WHERE t.owner IS NULL OR t.expires_ms <= " + now + " OR t.owner = EXCLUDED.owner RETURNING t.token)"
                + " SELECT token, 0 FROM g UNION ALL SELECT 0, expires_ms - " + now + " FROM " + t
                + " WHERE kind = 'L' AND name = ? AND NOT EXISTS (SELECT 1 FROM g)")) {
            s.setString(1, name);
            s.setString(2, owner);
            s.setLong(3, leaseMillis);
            s.setString(4, holder);
            s.setString(5, name);
            try (ResultSet r = s.executeQuery()) {
                return r.next() ? new Attempt(r.getLong(1), Math.max(0, r.getLong(2))) : new Attempt(0, 0);
            }
        }
    }

    private Attempt grantMariaDb(Connection c, String name, String owner, long leaseMillis, String holder) throws SQLException {
        String t = tables.names();
        try (PreparedStatement s = c.prepareStatement("UPDATE " + t + " SET token = LAST_INSERT_ID(token + 1), owner = ?,"
                + " expires_ms = " + now + " + ?, holder = ?, since_ms = " + now + " WHERE kind = 'L' AND name = ?"
                + " AND (owner IS NULL OR expires_ms <= " + now + " OR owner = ?)", Statement.RETURN_GENERATED_KEYS)) {
            s.setString(1, owner);
            s.setLong(2, leaseMillis);
            s.setString(3, holder);
            s.setString(4, name);
            s.setString(5, owner);
            if (s.executeUpdate() == 1) {
                return new Attempt(lastInsertId(c, s), 0);
            }
        }
        try (PreparedStatement s = c.prepareStatement("INSERT INTO " + t + " (kind, name, token, owner, expires_ms, holder,"
                + " since_ms) VALUES ('L', ?, 1, ?, " + now + " + ?, ?, " + now + ")")) {
            s.setString(1, name);
            s.setString(2, owner);
            s.setLong(3, leaseMillis);
            s.setString(4, holder);
            s.executeUpdate();
            return new Attempt(1, 0);
        } catch (SQLException e) {
            if (!dialect.isDuplicate(e)) {
                throw e;
            }
        }
        try (PreparedStatement s = c.prepareStatement("SELECT expires_ms - " + now + " FROM " + t
                + " WHERE kind = 'L' AND name = ?")) {
            s.setString(1, name);
            try (ResultSet r = s.executeQuery()) {
                return new Attempt(0, r.next() ? Math.max(0, r.getLong(1)) : 0);
            }
        }
    }

    private static long lastInsertId(Connection c, PreparedStatement s) throws SQLException {
        try (ResultSet keys = s.getGeneratedKeys()) {
            if (keys.next() && keys.getLong(1) > 0) {
                return keys.getLong(1);
            }
        }
        try (Statement q = c.createStatement(); ResultSet r = q.executeQuery("SELECT LAST_INSERT_ID()")) {
            r.next();
            return r.getLong(1);
        }
    }

    /** Frees the row if it still carries {@code owner}; on PostgreSQL notifies the release in the same statement. */
    void release(Connection c, String name, String owner) throws SQLException {
        tables.writeAndNotify(c, dialect, "UPDATE " + tables.names() + " SET owner = NULL, expires_ms = NULL, holder = NULL,"
                + " since_ms = NULL WHERE kind = 'L' AND name = ? AND owner = ?", Wakeups.key('L', name), name, owner);
    }

    /** Lets the row expire {@code millis} from the database's now instead of renewing it; false if it is no longer held. */
    boolean expireAfter(Connection c, String name, String owner, long millis) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("UPDATE " + tables.names() + " SET expires_ms = " + now + " + ?"
                + " WHERE kind = 'L' AND name = ? AND owner = ? AND expires_ms > " + now)) {
            s.setLong(1, millis);
            s.setString(2, name);
            s.setString(3, owner);
            return s.executeUpdate() == 1;
        }
    }

    Optional<Instant> lastSlot(Connection c, String name) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT last_slot FROM " + tables.names()
                + " WHERE kind = 'L' AND name = ?")) {
            s.setString(1, name);
            try (ResultSet r = s.executeQuery()) {
                return r.next() && r.getString(1) != null ? Optional.of(Instant.parse(r.getString(1))) : Optional.empty();
            }
        }
    }

    /** Records the slot only while the row carries this grant (owner and token) and has not expired. */
    boolean recordSlot(Connection c, String name, String owner, long token, Instant slot) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("UPDATE " + tables.names() + " SET last_slot = ? WHERE kind = 'L'"
                + " AND name = ? AND owner = ? AND token = ? AND expires_ms > " + now)) {
            s.setString(1, slot.toString());
            s.setString(2, name);
            s.setString(3, owner);
            s.setLong(4, token);
            return s.executeUpdate() == 1;
        }
    }

    Optional<GrantRecord> inspect(Connection c, String name, boolean lock) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT holder, token, expires_ms - " + now + ", since_ms FROM "
                + tables.names() + " WHERE kind = 'L' AND name = ? AND owner IS NOT NULL AND expires_ms > " + now
                + (lock ? " FOR UPDATE" : ""))) {
            s.setString(1, name);
            try (ResultSet r = s.executeQuery()) {
                if (!r.next()) {
                    return Optional.empty();
                }
                return Optional.of(new GrantRecord(r.getString(1), r.getLong(2), Duration.ofMillis(r.getLong(3)), -1,
                        new GrantTime(Instant.ofEpochMilli(r.getLong(4)), GrantTime.Source.BACKEND_AT_GRANT)));
            }
        }
    }

    /**
     * Ends the current grant of {@code name}, whoever holds it; the row and its token stay. On PostgreSQL the
     * waiters are notified when the transaction commits.
     */
    Optional<GrantRecord> force(Connection c, String name) throws SQLException {
        Optional<GrantRecord> ended = inspect(c, name, true);
        if (ended.isPresent()) {
            tables.writeAndNotify(c, dialect, "UPDATE " + tables.names() + " SET owner = NULL, expires_ms = NULL,"
                    + " holder = NULL, since_ms = NULL WHERE kind = 'L' AND name = ?", Wakeups.key('L', name), name);
        }
        return ended;
    }

    List<String> list(Connection c, String prefix, String after, int limit) throws SQLException {
        String like = prefix.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%";
        try (PreparedStatement s = c.prepareStatement("SELECT name FROM " + tables.names() + " WHERE kind = 'L'"
                + " AND owner IS NOT NULL AND expires_ms > " + now + " AND name LIKE ? ESCAPE '!'"
                + (after == null ? "" : " AND name > ?") + " ORDER BY name LIMIT ?")) {
            int i = 1;
            s.setString(i++, like);
            if (after != null) {
                s.setString(i++, after);
            }
            s.setInt(i, limit);
            List<String> names = new ArrayList<>();
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    names.add(r.getString(1));
                }
            }
            return names;
        }
    }
}
