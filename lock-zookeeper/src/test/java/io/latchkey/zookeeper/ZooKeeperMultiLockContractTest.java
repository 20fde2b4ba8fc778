package io.latchkey.zookeeper;

import io.latchkey.testkit.MultiLockContract;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.util.Collection;

/** The whole multi-lock contract against the ZooKeeper server {@link ZooKeeperLockContractTest} uses. */
class ZooKeeperMultiLockContractTest extends MultiLockContract<ZooKeeperServer> {

    ZooKeeperMultiLockContractTest() {
        super(ZooKeeperBackendTest.SERVER_KEY, ZooKeeperServer::start);
    }

    /** As for a single lock: no lock node or container node of the names remains. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        ZooKeeperLockContractTest.assertNoLockNodeLeft(server(), options().timeout(), lockNames);
    }
}
