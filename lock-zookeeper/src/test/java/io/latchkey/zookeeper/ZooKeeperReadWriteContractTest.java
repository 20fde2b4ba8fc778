package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.ReadWriteContract;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.time.Duration;
import java.util.Collection;
import org.apache.curator.framework.CuratorFramework;
import org.awaitility.Awaitility;

/** The whole read-write contract against the ZooKeeper server {@link ZooKeeperLockContractTest} uses. */
class ZooKeeperReadWriteContractTest extends ReadWriteContract<ZooKeeperServer> {

    ZooKeeperReadWriteContractTest() {
        super(ZooKeeperBackendTest.SERVER_KEY, ZooKeeperServer::start);
    }

    /** No node of the names remains under {@code @rw}, the container of each name included. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> names) {
        try (CuratorFramework raw = ZooKeeperTestSupport.rawClient(server().connectString())) {
            Awaitility.await("empty container nodes to be deleted")
                    .atMost(ZooKeeperTestSupport.containerReapBound(options().timeout()))
                    .pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
                        for (String name : names) {
                            String path = LockPaths.DEFAULT_BASE + "/" + LockPaths.READ_WRITE + "/" + LockPaths.nodeName(name);
                            assertThat(raw.checkExists().forPath(path)).as("zookeeper node %s of read-write lock '%s'", path,
                                    name).isNull();
                        }
                    });
        }
    }
}
