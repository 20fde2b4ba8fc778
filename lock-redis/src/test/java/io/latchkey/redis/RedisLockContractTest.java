package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.LockContract;
import io.latchkey.testkit.redis.RedisServer;
import java.util.Collection;
import java.util.List;

/** The whole contract against one Redis 7.0 server, the one {@link RedisLockTest} uses too. */
class RedisLockContractTest extends LockContract<RedisServer> {

    RedisLockContractTest() {
        super(RedisLockTest.SERVER_KEY, RedisServer::start);
    }

    /** Redisson's event loop and timer threads are the library's too. */
    @Override
    protected boolean isLibraryThread(Thread thread) {
        return super.isLibraryThread(thread) || thread.getName().startsWith("redisson-");
    }

    @Override
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        for (String name : lockNames) {
            assertThat(server().cli(List.of(), "EXISTS", RedisLockBackend.DEFAULT_NAMESPACE + ":" + name))
                    .as("lock key of '%s' after close", name).isEqualTo("0");
        }
    }
}
