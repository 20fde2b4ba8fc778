#!/bin/sh
# Waits for the fixture to copy in /etc/latchkey-etcd.conf (it knows the published client port only
# once the container runs), then keeps etcd running: restart() kills the process and this loop starts
# it again on the same data directory; a member held down (/var/lib/latchkey-etcd/hold) stays stopped.
# The fixture copies /etc/latchkey-etcd.ready after the configuration: a file being copied exists
# before all of it is written, and a half-read configuration once gave etcd an empty heartbeat.
while [ ! -f /etc/latchkey-etcd.ready ]; do sleep 0.1; done
. /etc/latchkey-etcd.conf
trap 'kill "$(cat /var/lib/latchkey-etcd/etcd.pid)" 2>/dev/null; exit 0' TERM INT

SCHEME=http
TLS_FLAGS=""
if [ "$ETCD_TLS" = "1" ]; then
    # a throwaway CA and a server certificate for the name and address the test connects to
    TLS=/etc/latchkey-etcd-tls
    if [ ! -f $TLS/server.pem ]; then
        mkdir -p $TLS && cd $TLS
        openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj /CN=latchkey-test-ca -keyout ca.key -out ca.pem 2>/dev/null
        openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout server.key -out server.csr 2>/dev/null
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > san.ext
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 7 -extfile san.ext -out server.pem 2>/dev/null
        cd /
    fi
    SCHEME=https
    TLS_FLAGS="--cert-file $TLS/server.pem --key-file $TLS/server.key"
fi

while true; do
    if [ -f /var/lib/latchkey-etcd/hold ]; then
        sleep 0.2
        continue
    fi
    # shellcheck disable=SC2086
    etcd --name "$ETCD_MEMBER" --data-dir /var/lib/latchkey-etcd/data \
        --listen-client-urls "$SCHEME://0.0.0.0:2379" --advertise-client-urls "$ETCD_ADVERTISE" $TLS_FLAGS \
        --listen-peer-urls http://0.0.0.0:2380 --initial-advertise-peer-urls "http://$ETCD_MEMBER:2380" \
        --initial-cluster "$ETCD_CLUSTER" --initial-cluster-state new --initial-cluster-token latchkey \
        --heartbeat-interval "$ETCD_HEARTBEAT_MS" --election-timeout "$ETCD_ELECTION_MS" &
    echo $! > /var/lib/latchkey-etcd/etcd.pid
    wait $!
    echo "latchkey-etcd: etcd exited"
    sleep 0.2
done
