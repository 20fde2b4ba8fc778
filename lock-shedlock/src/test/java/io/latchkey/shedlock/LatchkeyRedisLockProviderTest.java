package io.latchkey.shedlock;

import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.redis.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ShedLock's provider suite on Redis, one server for the class. Every ShedLock semantic holds as
 * ShedLock states it: {@code lockAtLeastFor} is handed to the key's expiry, in milliseconds.
 */
@DisplayName("ShedLock's provider suite on Redis")
class LatchkeyRedisLockProviderTest extends ShedLockProviderContract {

    @RegisterExtension
    static final SharedServer<RedisServer> REDIS = SharedServer.of("redis", RedisServer::start);

    @Override
    Duration lease() {
        return Duration.ofSeconds(2);
    }

    @Override
    String uri() {
        return REDIS.get().uri(REDIS.get().endpoints()) + "?lease=2s&timeout=1s";
    }
}
