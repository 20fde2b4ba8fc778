#!/bin/sh
# Runs Debian's ZooKeeper in the foreground under a small supervisor, so that a test can restart the
# server process (or hold it down) while the container, and with it the published port, stays.
#   ZK_MYID, ZK_SERVERS  the node's id and the ensemble's server.N lines (space separated); unset = standalone
#   /run/zookeeper.hold  while this file exists the server is not started again
set -u
DATA=/var/lib/zookeeper-test
CONF=/etc/zookeeper-test
mkdir -p "$DATA" "$CONF"
cat > "$CONF/zoo.cfg" <<CFG
tickTime=${ZK_TICK_MS:-500}
initLimit=${ZK_INIT_LIMIT:-20}
syncLimit=${ZK_SYNC_LIMIT:-5}
dataDir=$DATA
clientPort=2181
maxClientCnxns=0
minSessionTimeout=1000
maxSessionTimeout=120000
4lw.commands.whitelist=srvr,ruok,mntr,wchp,wchc,cons,stat
admin.enableServer=false
quorumListenOnAllIPs=true
CFG
if [ -n "${ZK_SERVERS:-}" ]; then
    echo "${ZK_MYID:?ZK_MYID is required with ZK_SERVERS}" > "$DATA/myid"
    for line in $ZK_SERVERS; do echo "$line" >> "$CONF/zoo.cfg"; done
fi

stop() {
    [ -f /run/zookeeper.pid ] && kill "$(cat /run/zookeeper.pid)" 2>/dev/null
    exit 0
}
trap stop TERM INT

while :; do
    if [ -e /run/zookeeper.hold ]; then
        sleep 0.1
        continue
    fi
    java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
        -Dznode.container.checkIntervalMs="${ZK_CONTAINER_CHECK_MS:-500}" \
        -Dorg.slf4j.simpleLogger.showDateTime=true \
        -cp "$CONF:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar" \
        org.apache.zookeeper.server.quorum.QuorumPeerMain "$CONF/zoo.cfg" &
    echo $! > /run/zookeeper.pid
    wait $!
done
