package io.latchkey.redis;

import io.latchkey.testkit.ElectionContract;
import io.latchkey.testkit.redis.RedisServer;

/** The whole election contract against the Redis 7.0 server {@link RedisLockContractTest} uses. */
class RedisElectionContractTest extends ElectionContract<RedisServer> {

    RedisElectionContractTest() {
        super(RedisLockTest.SERVER_KEY, RedisServer::start);
    }
}
