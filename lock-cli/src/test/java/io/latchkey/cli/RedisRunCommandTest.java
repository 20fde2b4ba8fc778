package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.redis.RedisServer;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** {@code latchkey run} and {@code latchkey elect} against Redis in a container from the test kit, one server for the class. */
@DisplayName("latchkey run and elect on Redis")
class RedisRunCommandTest extends RunCommandContract {

    private static RedisServer redis;

    @BeforeAll
    static void startServer() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopServer() {
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    InetSocketAddress server() {
        return redis.endpoints().get(0);
    }

    @Override
    String uri(InetSocketAddress endpoint) {
        return redis.uri(List.of(endpoint)) + "?" + QUERY;
    }

    @Test
    @DisplayName("a run connects with the URI's password, and the command sees LATCHKEY_URI with it replaced by ****")
    void commandSeesTheUriWithoutItsPassword() throws Exception {
        // the server's default user has no password, so Redis accepts any password given with its name:
        // the run connects with this one, and only the variable the command sees must not show it
        String password = "s3cret-" + ProcessHandle.current().pid();
        String withPassword = uri().replaceFirst("^redis://", "redis://default:" + password + "@");
        Path env = dir.resolve("uri");
        Cli cli = run(withPassword, lockName(), List.of(), "sh", "-c", "printf '%s\\n' \"$LATCHKEY_URI\" > '" + env + "'");

        assertThat(cli.await(bound())).as("latchkey run with %s; stderr: %s", withPassword, cli.stderr()).isZero();
        assertThat(Files.readAllLines(env)).containsExactly(uri().replaceFirst("^redis://", "redis://default:****@"));
    }

    /** {@code latchkey elect} on the same server. */
    @Nested
    @DisplayName("latchkey elect")
    class Elect extends ElectCommandContract {
        Elect() {
            super(RedisRunCommandTest.this);
        }
    }

    /** {@code latchkey status} on the same server. */
    @Nested
    @DisplayName("latchkey status")
    class Status extends StatusCommandContract {
        Status() {
            super(RedisRunCommandTest.this);
        }
    }
}
