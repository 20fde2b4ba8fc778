#!/bin/sh
# Runs once, at image build time, as root: makes the data directory if the package did not, then the
# latchkey database and user 'latchkey'@'%' with every privilege on it. root@localhost keeps the
# package's unix_socket authentication: the fixture's mariadb client runs as root in the container.
set -eu
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
[ -d /var/lib/mysql/mysql ] || mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
mariadbd --user=mysql --skip-networking &
pid=$!
i=0
until mariadb-admin ping --silent >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -lt 600 ] || { echo "mariadbd did not start" >&2; exit 1; }
    sleep 0.1
done
mariadb <<'SQL'
DELETE FROM mysql.global_priv WHERE User = '';
FLUSH PRIVILEGES;
CREATE DATABASE latchkey;
CREATE USER 'latchkey'@'%' IDENTIFIED BY 'latchkey-secret';
GRANT ALL PRIVILEGES ON latchkey.* TO 'latchkey'@'%';
SQL
mariadb-admin shutdown
wait $pid
