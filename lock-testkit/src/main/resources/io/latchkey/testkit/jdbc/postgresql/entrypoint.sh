#!/bin/sh
# Keeps PostgreSQL running on the cluster made at build time: restart() stops the postmaster cleanly
# (pg_ctl stop -m fast) and this loop starts it again on the same data directory, while the container,
# and with it the published port, stays. Runs as postgres.
#   LATCHKEY_TLS=1  TLS only (pg_hba.conf has hostssl lines alone), with a throwaway CA and a server
#                   certificate for localhost and 127.0.0.1; otherwise plain TCP only
# Both accept any address with a scram-sha-256 password; the socket, which only the fixture's own
# psql uses inside the container, trusts every local user.
set -u
HOME_DIR=/var/lib/latchkey-postgres
if [ "${LATCHKEY_TLS:-0}" = "1" ]; then
    TLS=$HOME_DIR/tls
    if [ ! -f $TLS/server.pem ]; then
        mkdir -p $TLS && cd $TLS
        openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj /CN=latchkey-test-ca -keyout ca.key -out ca.pem 2>/dev/null
        openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout server.key -out server.csr 2>/dev/null
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > san.ext
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 7 -extfile san.ext -out server.pem 2>/dev/null
        chmod 600 server.key ca.key # postgres refuses a key others can read
        cd /
    fi
    printf "ssl = on\nssl_cert_file = '%s'\nssl_key_file = '%s'\n" "$TLS/server.pem" "$TLS/server.key" > "$PGDATA/latchkey-mode.conf"
    HOST=hostssl
else
    : > "$PGDATA/latchkey-mode.conf"
    HOST=host
fi
cat > "$PGDATA/pg_hba.conf" <<HBA
local all all trust
$HOST all all 0.0.0.0/0 scram-sha-256
$HOST all all ::/0 scram-sha-256
HBA

trap 'pg_ctl -D "$PGDATA" -m fast stop >/dev/null 2>&1; exit 0' TERM INT
while true; do
    postgres -D "$PGDATA" &
    wait $!
    echo "latchkey-postgres: postgres exited"
    sleep 0.2
done
