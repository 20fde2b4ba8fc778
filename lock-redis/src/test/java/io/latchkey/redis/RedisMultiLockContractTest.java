package io.latchkey.redis;

import io.latchkey.testkit.MultiLockContract;
import io.latchkey.testkit.redis.RedisServer;
import java.util.Collection;

/** The whole multi-lock contract against the Redis 7.0 server {@link RedisLockContractTest} uses. */
class RedisMultiLockContractTest extends MultiLockContract<RedisServer> {

    RedisMultiLockContractTest() {
        super(RedisLockTest.SERVER_KEY, RedisServer::start);
    }

    /** As for a single lock: of each name, only its fencing counter stays on the server. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        RedisLockContractTest.assertOnlyTokensLeft(server(), lockNames);
    }
}
