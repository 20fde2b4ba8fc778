package io.latchkey.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What differs between the databases: the DDL, the database's clock in milliseconds, and the few
 * statements one of them writes otherwise. Every time a statement compares or stores is the
 * database's, read once per statement ({@code now()} on PostgreSQL, the statement's start;
 * {@code UTC_TIMESTAMP(3)} on MariaDB and MySQL, the same in every part of a statement and free of the
 * session's time zone).
 */
enum Dialect {

    POSTGRESQL("postgresql", "CAST(EXTRACT(EPOCH FROM now()) * 1000 AS BIGINT)"),
    MARIADB("mariadb", "(TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)"),
    MYSQL("mysql", "(TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)");

    private final String name;
    /** The database's clock, in milliseconds since the epoch, as an SQL expression. */
    final String now;

    Dialect(String name, String now) {
        this.name = name;
        this.now = now;
    }

    /** The dialect of a URI scheme; {@code mysql} is taken to be MariaDB until the server says otherwise. */
    static Dialect ofScheme(String scheme) {
        return scheme.equals("postgresql") ? POSTGRESQL : MARIADB;
    }

    /** The dialect of a connected database, from its product name and version. */
    static Dialect ofProduct(String product, String version) {
        String p = product.toLowerCase(Locale.ROOT);
        if (p.contains("postgres")) {
            return POSTGRESQL;
        }
        if (p.contains("mariadb") || version.toLowerCase(Locale.ROOT).contains("mariadb")) {
            return MARIADB;
        }
        if (p.contains("mysql")) {
            return MYSQL;
        }
        throw new IllegalArgumentException("Latchkey's JDBC backend serves PostgreSQL, MariaDB and MySQL; this"
                + " DataSource connects to " + product + " " + version);
    }

    /** Whether releases wake waiters of other clients through {@code LISTEN}/{@code NOTIFY}. */
    boolean notifies() {
        return this == POSTGRESQL;
    }

    /** The DDL shipped in the jar for the default namespace, as users read it. */
    String ddl() {
        String resource = "schema-" + name + ".sql";
        try (InputStream in = Dialect.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("the jar lacks " + resource);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource + " from the jar", e);
        }
    }

    /** The DDL for tables of prefix {@code prefix} (the namespace), as statements to run in order. */
    List<String> ddlStatements(String prefix) {
        List<String> statements = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : ddl().split("\n")) {
            if (line.startsWith("--") || line.isBlank()) {
                continue;
            }
            current.append(line).append('\n');
            if (line.endsWith(";")) {
                String statement = current.toString().trim();
                statements.add(statement.substring(0, statement.length() - 1).replace("latchkey_", prefix + "_"));
                current.setLength(0);
            }
        }
        return statements;
    }

    /** The DDL for namespace {@code prefix}, as a user runs it. */
    String ddlFor(String prefix) {
        return String.join(";\n", ddlStatements(prefix)) + ";";
    }

    /** An SQL state or vendor code that says a table does not exist. */
    boolean isMissingTable(java.sql.SQLException e) {
        return "42P01".equals(e.getSQLState()) || e.getErrorCode() == 1146;
    }

    /** An SQL state or vendor code that says the user lacks a privilege. */
    boolean isDenied(java.sql.SQLException e) {
        String state = e.getSQLState();
        return "42501".equals(state) || e.getErrorCode() == 1142 || e.getErrorCode() == 1143
                || e.getErrorCode() == 1044 || e.getErrorCode() == 1045 || "28P01".equals(state)
                || "28000".equals(state);
    }

    /** A deadlock or serialization failure: the transaction may simply run again. */
    boolean isRetryable(java.sql.SQLException e) {
        String state = e.getSQLState();
        return "40001".equals(state) || "40P01".equals(state) || e.getErrorCode() == 1213 || e.getErrorCode() == 1205;
    }

    /** The connection failed, or the server ended it (a shutdown or restart): another connection may work. */
    boolean isConnectionFailure(java.sql.SQLException e) {
        String state = e.getSQLState();
        return e instanceof java.sql.SQLTransientConnectionException || e instanceof java.sql.SQLRecoverableException
                || e instanceof java.sql.SQLNonTransientConnectionException
                || (state != null && (state.startsWith("08") || state.equals("57P01") || state.equals("57P02")
                        || state.equals("57P03")));
    }

    /** A duplicate key. */
    boolean isDuplicate(java.sql.SQLException e) {
        return "23505".equals(e.getSQLState()) || e.getErrorCode() == 1062;
    }

    @Override
    public String toString() {
        return name;
    }
}
