package io.latchkey.cli;

import io.latchkey.cli.server.EmbeddedZooKeeper;
import io.latchkey.testkit.fault.TcpProxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

/** {@code latchkey run} against the embedded ZooKeeper of {@code latchkey server}, one server for the class. */
@DisplayName("latchkey run on ZooKeeper")
class ZooKeeperRunCommandTest extends RunCommandContract {

    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final String QUERY = "lease=2s&timeout=1s";

    private static EmbeddedZooKeeper zk;
    private static TcpProxy proxy;

    @BeforeAll
    static void startServer() {
        zk = EmbeddedZooKeeper.start(0);
        proxy = TcpProxy.start(new InetSocketAddress("127.0.0.1", zk.port()));
    }

    @AfterAll
    static void stopServer() {
        proxy.close();
        zk.close();
    }

    @Override
    String uri() {
        return zk.uri(QUERY);
    }

    @Override
    String cuttableUri() {
        return "zookeeper://" + proxy.endpoint().getHostString() + ":" + proxy.endpoint().getPort() + "/latchkey?" + QUERY;
    }

    @Override
    Duration lease() {
        return LEASE;
    }

    @Override
    void cut() {
        proxy.cut();
    }

    @Override
    void restore() {
        proxy.restore();
    }
}
