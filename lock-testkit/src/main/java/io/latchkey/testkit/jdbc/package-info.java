/**
 * Database servers for the JDBC backend's contract: {@link io.latchkey.testkit.jdbc.PostgresServer}
 * (PostgreSQL 15, plain or TLS) and {@link io.latchkey.testkit.jdbc.MariaDbServer} (MariaDB 10.11), each
 * one container built from Debian bookworm's own package.
 */
package io.latchkey.testkit.jdbc;
