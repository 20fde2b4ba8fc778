package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.ReadWriteContract;
import io.latchkey.testkit.redis.RedisServer;
import java.util.Collection;

/** The whole read-write contract against the Redis 7.0 server {@link RedisLockContractTest} and {@link RedisLockTest} use. */
class RedisReadWriteContractTest extends ReadWriteContract<RedisServer> {

    RedisReadWriteContractTest() {
        super(RedisLockTest.SERVER_KEY, RedisServer::start);
    }

    /** Redisson's event loop and timer threads are the library's too. */
    @Override
    protected boolean isLibraryThread(Thread thread) {
        return super.isLibraryThread(thread) || thread.getName().startsWith("redisson-");
    }

    /** Of every key of a read-write lock (all of them carry its hash tag), only its token counter remains. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> names) {
        for (String name : names) {
            String tag = RedisKeys.semaphoreTag(RedisLockBackend.DEFAULT_NAMESPACE + ":", name);
            assertThat(RedisSemaphoreContractTest.keysWithTag(server(), tag)).as("keys of read-write lock '%s' after close", name)
                    .containsExactly(RedisKeys.readWriteTokenKey(tag));
        }
    }
}
