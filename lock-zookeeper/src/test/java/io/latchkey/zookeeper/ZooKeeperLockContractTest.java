package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.FairOrderingContract;
import io.latchkey.testkit.LockServer;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.time.Duration;
import java.util.Collection;
import org.apache.curator.framework.CuratorFramework;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The whole contract, fair ordering included, against one ZooKeeper server in a container. */
class ZooKeeperLockContractTest extends FairOrderingContract {

    private static ZooKeeperServer server;

    @BeforeAll
    static void startServer() {
        server = ZooKeeperServer.start();
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @Override
    protected LockServer server() {
        return server;
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
        try (CuratorFramework raw = ZooKeeperTestSupport.rawClient(server.connectString())) {
            Awaitility.await("empty container nodes to be deleted").atMost(ZooKeeperTestSupport.containerReapBound(options().timeout()))
                    .pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
                        for (String name : lockNames) {
                            String path = LockPaths.DEFAULT_BASE + "/" + LockPaths.nodeName(name);
                            assertThat(raw.checkExists().forPath(path)).as("zookeeper node %s of lock '%s'", path, name).isNull();
                        }
                    });
        }
    }
}
