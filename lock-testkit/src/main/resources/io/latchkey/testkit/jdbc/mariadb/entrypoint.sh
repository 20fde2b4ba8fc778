#!/bin/sh
# Keeps mariadbd running on the data directory made at build time: restart() stops it cleanly
# (SIGTERM) and this loop starts it again, while the container, and with it the published port, stays.
set -u
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
trap 'kill "$(cat /run/latchkey-mariadb.pid)" 2>/dev/null; exit 0' TERM INT
while true; do
    mariadbd --user=mysql &
    echo $! > /run/latchkey-mariadb.pid
    wait $!
    echo "latchkey-mariadb: mariadbd exited"
    sleep 0.2
done
