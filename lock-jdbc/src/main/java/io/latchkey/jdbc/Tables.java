package io.latchkey.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.regex.Pattern;

/**
 * The two tables of a namespace: {@code <namespace>_names} (one row per name and kind, the token
 * counter, kept after release) and {@code <namespace>_holders} (one row per held permit, reader or
 * writer). The namespace is their prefix and the name of the {@code LISTEN} channel
 * ({@code <namespace>_release}) on PostgreSQL.
 */
record Tables(String namespace) {

    /** The namespace used when none is given. */
    static final String DEFAULT_NAMESPACE = "latchkey";

    private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,39}");

    /**
     * The tables of {@code namespace}.
     *
     * @throws IllegalArgumentException if the namespace is not a plain lower-case SQL identifier
     */
    static Tables of(String namespace, String where) {
        String ns = namespace == null ? DEFAULT_NAMESPACE : namespace;
        if (!IDENTIFIER.matcher(ns).matches()) {
            throw new IllegalArgumentException("namespace='" + ns + "' of " + where + " is not a table prefix: on a database"
                    + " the namespace names Latchkey's tables (<namespace>_names, <namespace>_holders), so it must be 1 to"
                    + " 40 lower-case letters, digits or '_', starting with a letter or '_'; for example namespace=latchkey");
        }
        return new Tables(ns);
    }

    String names() {
        return namespace + "_names";
    }

    String holders() {
        return namespace + "_holders";
    }

    /** The PostgreSQL channel that releases notify, and waiters listen on. */
    String channel() {
        return namespace + "_release";
    }

    /**
     * Runs {@code write}, an UPDATE or DELETE of these tables with the parameters {@code params}, and on
     * PostgreSQL, given a {@code wakeKey}, notifies that key on {@link #channel()} in the same statement for
     * the row it changed: the notification goes out when the write commits, and a write that changed nothing
     * (a release after the row expired) wakes nobody.
     */
    void writeAndNotify(Connection c, Dialect dialect, String write, String wakeKey, String... params) throws SQLException {
        boolean notify = dialect.notifies() && wakeKey != null;
        String sql = notify ? "WITH r AS (" + write + " RETURNING name) SELECT pg_notify(?, ?) FROM r" : write;
        try (PreparedStatement s = c.prepareStatement(sql)) {
            int i = 1;
            for (String p : params) {
                s.setString(i++, p);
            }
            if (notify) {
                s.setString(i++, channel());
                s.setString(i, wakeKey);
                s.executeQuery().close();
            } else {
                s.executeUpdate();
            }
        }
    }

    /**
     * Makes sure both tables exist with Latchkey's columns and this user may read them: one read of each
     * when they do. Tables the read does not find are created ({@code CREATE TABLE IF NOT EXISTS}) when
     * {@code create} allows and the user may, and read again; a table without a column Latchkey uses is
     * the read's error.
     *
     * @throws Missing if they are missing and this user could not create them
     * @throws SQLException if they cannot be read
     */
    void ensure(Connection c, Dialect dialect, boolean create) throws SQLException {
        try {
            read(c);
            return;
        } catch (SQLException e) {
            if (!create || !notFound(dialect, e)) {
                throw e;
            }
            rollback(c); // on PostgreSQL a failed statement ends an open transaction: the DDL starts afresh
        }
        SQLException notCreated = null;
        try (Statement s = c.createStatement()) {
            for (String ddl : dialect.ddlStatements(namespace)) {
                s.execute(ddl);
            }
        } catch (SQLException e) {
            // not allowed to create, or another client created them at the same moment (PostgreSQL's
            // IF NOT EXISTS is not safe against a concurrent CREATE): the read below tells
            rollback(c);
            notCreated = e;
        }
        try {
            read(c);
        } catch (SQLException e) {
            if (notCreated != null && notFound(dialect, e)) {
                throw new Missing(notCreated);
            }
            throw e;
        }
    }

    /**
     * The read found no table, or may not see it: MariaDB and MySQL deny a table the user has no grant on
     * whether it exists or not.
     */
    private static boolean notFound(Dialect dialect, SQLException e) {
        return dialect.isMissingTable(e) || dialect.isDenied(e);
    }

    /** Reads no row of either table, naming every column Latchkey uses. */
    private void read(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.executeQuery("SELECT kind, name, token, owner, expires_ms, holder, since_ms, permits, last_slot,"
                    + " waiting_writer, waiting_until_ms FROM " + names() + " WHERE 1 = 0").close();
            s.executeQuery("SELECT kind, name, slot, owner, token, expires_ms, holder, since_ms FROM " + holders()
                    + " WHERE 1 = 0").close();
        }
    }

    private static void rollback(Connection c) throws SQLException {
        if (!c.getAutoCommit()) {
            c.rollback();
        }
    }

    /** The tables are missing, and creating them failed with the cause. */
    static final class Missing extends RuntimeException {
        Missing(SQLException cause) {
            super(cause.getMessage(), cause);
        }
    }

    /** The message for tables that are not there: which, and the DDL that makes them. */
    String missing(String where, Dialect dialect) {
        return "Latchkey's tables " + names() + " and " + holders() + " are not in " + where + " and this user may not"
                + " create them; have them created once with this DDL (shipped in lock-jdbc as io/latchkey/jdbc/schema-"
                + dialect + ".sql):\n" + dialect.ddlFor(namespace);
    }

    /** Advice for a user that may not use the tables. */
    String grantAdvice(Dialect dialect) {
        return "Latchkey's user needs SELECT, INSERT, UPDATE and DELETE on " + names() + " and " + holders()
                + " (and CREATE where it is to create them)";
    }
}
