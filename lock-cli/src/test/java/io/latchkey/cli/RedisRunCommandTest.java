package io.latchkey.cli;

import io.latchkey.testkit.redis.RedisServer;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

/** {@code latchkey run} against Redis in a container from the test kit, one server for the class. */
@DisplayName("latchkey run on Redis")
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
}
