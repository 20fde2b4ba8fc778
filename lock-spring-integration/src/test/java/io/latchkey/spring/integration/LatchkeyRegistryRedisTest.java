package io.latchkey.spring.integration;

import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.redis.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link RegistryContract} on Redis, on the module's shared server. */
class LatchkeyRegistryRedisTest extends RegistryContract {

    @RegisterExtension
    static final SharedServer<RedisServer> SERVER = SharedServer.of("redis", RedisServer::start);

    @Override
    String uri() {
        return SERVER.get().uri(SERVER.get().endpoints()) + "?lease=3s&timeout=1s";
    }

    @Override
    Duration lease() {
        return Duration.ofSeconds(3);
    }
}
