package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.SemaphoreContract;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.time.Duration;
import java.util.Collection;
import org.apache.curator.framework.CuratorFramework;
import org.awaitility.Awaitility;

/** The whole semaphore contract, against the ZooKeeper server {@link ZooKeeperLockContractTest} uses too. */
class ZooKeeperSemaphoreContractTest extends SemaphoreContract<ZooKeeperServer> {

    ZooKeeperSemaphoreContractTest() {
        super(ZooKeeperBackendTest.SERVER_KEY, ZooKeeperServer::start);
    }

    /** ZooKeeper's and Curator's own threads count too: they must end with the client. */
    @Override
    protected boolean isLibraryThread(Thread thread) {
        String n = thread.getName();
        return super.isLibraryThread(thread) || n.contains("-SendThread(") || n.endsWith("-EventThread")
                || n.startsWith("Curator-");
    }

    /** No waiter, no slot and no semaphore node remains once the container manager has run. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> semaphoreNames) {
        try (CuratorFramework raw = ZooKeeperTestSupport.rawClient(server().connectString())) {
            Awaitility.await("empty semaphore nodes to be deleted")
                    .atMost(ZooKeeperTestSupport.containerReapBound(options().timeout()))
                    .pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
                        for (String name : semaphoreNames) {
                            String path = LockPaths.DEFAULT_BASE + "/" + LockPaths.SEMAPHORES + "/" + LockPaths.nodeName(name);
                            assertThat(raw.checkExists().forPath(path)).as("zookeeper node %s of semaphore '%s'", path, name)
                                    .isNull();
                        }
                    });
        }
    }
}
