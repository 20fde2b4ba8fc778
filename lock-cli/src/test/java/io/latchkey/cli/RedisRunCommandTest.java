package io.latchkey.cli;

import io.latchkey.testkit.fault.TcpProxy;
import io.latchkey.testkit.redis.RedisServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

/** {@code latchkey run} against Redis in a container from the test kit, one server for the class. */
@DisplayName("latchkey run on Redis")
class RedisRunCommandTest extends RunCommandContract {

    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final String QUERY = "?lease=2s&timeout=1s";

    private static RedisServer redis;
    private static TcpProxy proxy;

    @BeforeAll
    static void startServer() {
        redis = RedisServer.start();
        InetSocketAddress a = redis.endpoints().get(0);
        proxy = TcpProxy.start(a);
    }

    @AfterAll
    static void stopServer() {
        if (proxy != null) {
            proxy.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    String uri() {
        return redis.uri(redis.endpoints()) + QUERY;
    }

    @Override
    String cuttableUri() {
        return "redis://" + proxy.endpoint().getHostString() + ":" + proxy.endpoint().getPort() + QUERY;
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
        if (proxy != null) {
            proxy.restore();
        }
    }
}
