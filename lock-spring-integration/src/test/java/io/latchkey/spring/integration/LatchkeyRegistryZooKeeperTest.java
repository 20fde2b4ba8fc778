package io.latchkey.spring.integration;

import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link RegistryContract} on ZooKeeper, on the module's shared server. */
class LatchkeyRegistryZooKeeperTest extends RegistryContract {

    @RegisterExtension
    static final SharedServer<ZooKeeperServer> SERVER = SharedServer.of("zookeeper", ZooKeeperServer::start);

    @Override
    String uri() {
        return SERVER.get().uri(SERVER.get().endpoints()) + "?lease=3s&timeout=1s";
    }

    @Override
    Duration lease() {
        return Duration.ofSeconds(3);
    }
}
