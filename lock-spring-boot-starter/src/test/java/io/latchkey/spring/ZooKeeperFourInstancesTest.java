package io.latchkey.spring;

import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

class ZooKeeperFourInstancesTest extends FourInstancesContract {

    private static ZooKeeperServer zookeeper;

    @BeforeAll
    static void startServer() {
        zookeeper = ZooKeeperServer.start();
    }

    @AfterAll
    static void stopServer() {
        if (zookeeper != null) {
            zookeeper.close();
        }
    }

    @Override
    String uri() {
        return zookeeper.uri(zookeeper.endpoints());
    }
}
