package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.FairOrderingContract;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.time.Duration;
import java.util.Collection;
import org.apache.curator.framework.CuratorFramework;
import org.awaitility.Awaitility;

/** The whole contract, fair ordering included, against the ZooKeeper server {@link ZooKeeperBackendTest} uses too. */
class ZooKeeperLockContractTest extends FairOrderingContract<ZooKeeperServer> {

    ZooKeeperLockContractTest() {
        super(ZooKeeperBackendTest.SERVER_KEY, ZooKeeperServer::start);
    }

    /** ZooKeeper's and Curator's own threads count too: they must end with the client. */
    @Override
    protected boolean isLibraryThread(Thread thread) {
        String n = thread.getName();
        return super.isLibraryThread(thread) || n.contains("-SendThread(") || n.endsWith("-EventThread")
                || n.startsWith("Curator-");
    }

    /** No lock node and no lock name's container node remains once the container manager has run. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        assertNoLockNodeLeft(server(), options().timeout(), lockNames);
    }

    /** No lock node and no container node of {@code lockNames} remains once the container manager has run. */
    static void assertNoLockNodeLeft(ZooKeeperServer server, Duration timeout, Collection<String> lockNames) {
        try (CuratorFramework raw = ZooKeeperTestSupport.rawClient(server.connectString())) {
            Awaitility.await("empty container nodes to be deleted").atMost(ZooKeeperTestSupport.containerReapBound(timeout))
                    .pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
                        for (String name : lockNames) {
                            String path = LockPaths.DEFAULT_BASE + "/" + LockPaths.nodeName(name);
                            assertThat(raw.checkExists().forPath(path)).as("zookeeper node %s of lock '%s'", path, name).isNull();
                        }
                    });
        }
    }
}
