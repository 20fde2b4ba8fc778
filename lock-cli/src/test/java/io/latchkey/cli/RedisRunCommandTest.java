package io.latchkey.cli;

import io.latchkey.testkit.redis.RedisServer;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/** {@code latchkey run} against Redis in a container from the test kit, one server for the class. */
@DisplayName("latchkey run on Redis")
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock(RunCommandContract.ONE_AT_A_TIME + "Redis")
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
