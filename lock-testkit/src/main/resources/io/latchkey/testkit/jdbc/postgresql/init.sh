#!/bin/sh
# Runs once, at image build time, as postgres: makes the cluster with the fixture's settings, the
# latchkey role, its database and pg_stat_statements in it. The entrypoint adds what differs between
# a plain and a TLS container (pg_hba.conf, latchkey-mode.conf).
set -eu
initdb -D "$PGDATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C >/dev/null
cat >> "$PGDATA/postgresql.conf" <<'CONF'

# --- the Latchkey test fixture ---
listen_addresses = '*'
port = 5432
max_connections = 200
shared_buffers = 64MB
password_encryption = scram-sha-256
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = all
# The server stops only cleanly (restart()) or with its container, never with the machine: a commit
# is in the WAL, written to the page cache, before it returns (synchronous_commit), and survives a
# restart of the process; syncing it to disk would cost every commit and protect nothing here.
fsync = off
synchronous_commit = on
full_page_writes = off
include_if_exists = 'latchkey-mode.conf'
CONF
pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d postgres <<'SQL'
CREATE ROLE latchkey LOGIN PASSWORD 'latchkey-secret';
CREATE DATABASE latchkey OWNER latchkey;
\connect latchkey
CREATE EXTENSION pg_stat_statements;
SQL
pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
