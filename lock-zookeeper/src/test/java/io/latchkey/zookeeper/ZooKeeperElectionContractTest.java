package io.latchkey.zookeeper;

import io.latchkey.testkit.ElectionContract;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;

/** The whole election contract against the ZooKeeper server {@link ZooKeeperLockContractTest} uses. */
class ZooKeeperElectionContractTest extends ElectionContract<ZooKeeperServer> {

    ZooKeeperElectionContractTest() {
        super(ZooKeeperBackendTest.SERVER_KEY, ZooKeeperServer::start);
    }
}
