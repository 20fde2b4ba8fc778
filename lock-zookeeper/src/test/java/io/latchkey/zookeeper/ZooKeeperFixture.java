package io.latchkey.zookeeper;

import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.util.ArrayDeque;
import java.util.Deque;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What this module's tests that look into ZooKeeper share, as a JUnit extension registered once per
 * class: the server of the module's tests ({@link SharedServer} under {@link ZooKeeperBackendTest#SERVER_KEY}),
 * a raw Curator client of the class's own to look at what the backend left there, and whatever a test
 * opened, closed after it, last opened first.
 *
 * <p>A class's tests run one at a time, so one list of what was opened serves them all.
 */
final class ZooKeeperFixture implements BeforeAllCallback, AfterAllCallback, AfterEachCallback {

    private final SharedServer<ZooKeeperServer> shared = SharedServer.of(ZooKeeperBackendTest.SERVER_KEY,
            ZooKeeperServer::start);
    private final Deque<AutoCloseable> opened = new ArrayDeque<>();
    private volatile ZooKeeperServer server;
    private volatile CuratorFramework raw;

    @Override
    public void beforeAll(ExtensionContext context) {
        shared.beforeAll(context);
        server = shared.get();
        raw = ZooKeeperTestSupport.rawClient(server.connectString());
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        for (AutoCloseable c; (c = opened.pollFirst()) != null; ) {
            c.close();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (raw != null) {
            raw.close();
        }
    }

    ZooKeeperServer server() {
        return server;
    }

    /** A started Curator client of no credentials on the server. */
    CuratorFramework raw() {
        return raw;
    }

    /** {@code c}, closed after the test. */
    <T extends AutoCloseable> T track(T c) {
        opened.addFirst(c);
        return c;
    }
}
