package io.latchkey.cli;

import io.latchkey.testkit.jdbc.MariaDbServer;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

/**
 * {@code latchkey run}, {@code elect} and {@code status} against MariaDB in a container from the test kit,
 * one server for the class, with the contract's lease and the backend's own poll interval (100ms on
 * MariaDB, whose releases notify no one). The URI carries the fixture's password, so the command sees it
 * redacted.
 */
@DisplayName("latchkey run and elect on MariaDB")
class MariaDbRunCommandTest extends RunCommandContract {

    private static MariaDbServer mariadb;

    @BeforeAll
    static void startServer() {
        mariadb = MariaDbServer.start();
    }

    @AfterAll
    static void stopServer() {
        if (mariadb != null) {
            mariadb.close();
        }
    }

    @Override
    InetSocketAddress server() {
        return mariadb.endpoints().get(0);
    }

    @Override
    String uri(InetSocketAddress endpoint) {
        return mariadb.uri(List.of(endpoint)) + "?" + QUERY;
    }

    /** {@code latchkey elect} on the same server. */
    @Nested
    @DisplayName("latchkey elect")
    class Elect extends ElectCommandContract {
        Elect() {
            super(MariaDbRunCommandTest.this);
        }
    }

    /** {@code latchkey status} on the same server. */
    @Nested
    @DisplayName("latchkey status")
    class Status extends StatusCommandContract {
        Status() {
            super(MariaDbRunCommandTest.this);
        }
    }
}
