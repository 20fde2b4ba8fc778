#!/bin/sh
# Formats the log directory once, then runs the broker; when the broker process ends (a restart
# asked for by the test kills it) it starts again on the same data and ports.
cd /opt/kafka
if [ ! -f /var/lib/kafka/data/meta.properties ]; then
  java -cp 'libs/*' kafka.tools.StorageTool format -t "$(cat cluster.id)" -c server.properties || exit 1
fi
while true; do
  java -Xms128m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp 'libs/*' kafka.Kafka server.properties &
  echo $! > kafka.pid
  wait $!
done
