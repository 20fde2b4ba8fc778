package io.latchkey.shedlock;

import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ShedLock's provider suite on ZooKeeper, one server for the class. Every ShedLock semantic holds as
 * ShedLock states it; {@code lockAtLeastFor} is kept by the client (a session's node cannot outlive it).
 */
@DisplayName("ShedLock's provider suite on ZooKeeper")
class LatchkeyZooKeeperLockProviderTest extends ShedLockProviderContract {

    @RegisterExtension
    static final SharedServer<ZooKeeperServer> ZOOKEEPER = SharedServer.of("zookeeper", ZooKeeperServer::start);

    @Override
    Duration lease() {
        return Duration.ofSeconds(2);
    }

    @Override
    String uri() {
        return ZOOKEEPER.get().uri(ZOOKEEPER.get().endpoints()) + "?lease=2s&timeout=1s";
    }
}
