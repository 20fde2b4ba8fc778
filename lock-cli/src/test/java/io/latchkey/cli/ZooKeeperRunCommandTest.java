package io.latchkey.cli;

import io.latchkey.cli.server.EmbeddedZooKeeper;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

/** {@code latchkey run} and {@code latchkey elect} against the embedded ZooKeeper of {@code latchkey server}, one server for the class. */
@DisplayName("latchkey run and elect on ZooKeeper")
class ZooKeeperRunCommandTest extends RunCommandContract {

    private static EmbeddedZooKeeper zk;

    @BeforeAll
    static void startServer() {
        zk = EmbeddedZooKeeper.start(0);
    }

    @AfterAll
    static void stopServer() {
        if (zk != null) {
            zk.close();
        }
    }

    @Override
    InetSocketAddress server() {
        return new InetSocketAddress("127.0.0.1", zk.port());
    }

    @Override
    String uri(InetSocketAddress endpoint) {
        return "zookeeper://" + endpoint.getHostString() + ":" + endpoint.getPort() + "/latchkey?" + QUERY;
    }

    /** {@code latchkey elect} on the same server. */
    @Nested
    @DisplayName("latchkey elect")
    class Elect extends ElectCommandContract {
        Elect() {
            super(ZooKeeperRunCommandTest.this);
        }
    }

    /** {@code latchkey status} on the same server. */
    @Nested
    @DisplayName("latchkey status")
    class Status extends StatusCommandContract {
        Status() {
            super(ZooKeeperRunCommandTest.this);
        }
    }
}
