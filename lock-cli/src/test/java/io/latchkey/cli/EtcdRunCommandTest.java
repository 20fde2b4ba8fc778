package io.latchkey.cli;

import io.latchkey.testkit.etcd.EtcdServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

/**
 * {@code latchkey run} and {@code latchkey elect} against etcd in a container from the test kit, one server for the class. The
 * lease is 3s, not the contract's 2s: etcd's TTLs are whole seconds and it expires a lease up to half
 * a second late, so 2s would leave a TTL of one second, below the server's minimum.
 */
@DisplayName("latchkey run and elect on etcd")
class EtcdRunCommandTest extends RunCommandContract {

    private static final Duration ETCD_LEASE = Duration.ofSeconds(3);
    private static EtcdServer etcd;

    @BeforeAll
    static void startServer() {
        etcd = EtcdServer.start();
    }

    @AfterAll
    static void stopServer() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @Override
    InetSocketAddress server() {
        return etcd.endpoints().get(0);
    }

    @Override
    String uri(InetSocketAddress endpoint) {
        return etcd.uri(List.of(endpoint)) + "?lease=3s&timeout=1s";
    }

    @Override
    Duration lease() {
        return ETCD_LEASE;
    }

    /** {@code latchkey elect} on the same server. */
    @Nested
    @DisplayName("latchkey elect")
    class Elect extends ElectCommandContract {
        Elect() {
            super(EtcdRunCommandTest.this);
        }
    }

    /** {@code latchkey status} on the same server. */
    @Nested
    @DisplayName("latchkey status")
    class Status extends StatusCommandContract {
        Status() {
            super(EtcdRunCommandTest.this);
        }
    }
}
