#!/bin/sh
# Waits for the fixture to copy in /etc/latchkey-etcd.conf (it knows the published client port only
# once the container runs), then keeps etcd running: restart() kills the process and this loop starts
# it again on the same data directory; a member held down (/tmp/etcd.hold) stays stopped.
while [ ! -f /etc/latchkey-etcd.conf ]; do sleep 0.1; done
. /etc/latchkey-etcd.conf
trap 'kill "$(cat /tmp/etcd.pid)" 2>/dev/null; exit 0' TERM INT
while true; do
    if [ -f /tmp/etcd.hold ]; then
        sleep 0.2
        continue
    fi
    etcd --name "$ETCD_MEMBER" --data-dir /var/lib/latchkey-etcd/data \
        --listen-client-urls http://0.0.0.0:2379 --advertise-client-urls "$ETCD_ADVERTISE" \
        --listen-peer-urls http://0.0.0.0:2380 --initial-advertise-peer-urls "http://$ETCD_MEMBER:2380" \
        --initial-cluster "$ETCD_CLUSTER" --initial-cluster-state new --initial-cluster-token latchkey \
        --heartbeat-interval 100 --election-timeout 1000 &
    echo $! > /tmp/etcd.pid
    wait $!
    echo "latchkey-etcd: etcd exited"
    sleep 0.2
done
