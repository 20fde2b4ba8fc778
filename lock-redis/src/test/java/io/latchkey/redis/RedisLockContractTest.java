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

    /**
     * README: of a lock name, only its fencing counter stays on the server (rule 8 needs it); the lock
     * key, its waiter queue and its once-per-slot record are gone.
     */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        assertOnlyTokensLeft(server(), lockNames);
    }

    /** Of every key of {@code lockNames} on {@code server}, only each name's fencing counter remains. */
    static void assertOnlyTokensLeft(RedisServer server, Collection<String> lockNames) {
        for (String name : lockNames) {
            String key = RedisLockBackend.DEFAULT_NAMESPACE + ":" + name;
            String glob = "*" + name.replaceAll("([*?\\[\\]\\\\])", "\\\\$1") + "*";
            String found = server.cli(List.of(), "--scan", "--pattern", glob);
            assertThat(found.isEmpty() ? List.of() : List.of(found.split("\\R")))
                    .as("keys of lock '%s' left on the server after close", name)
                    .containsExactly(RedisKeys.tokenKey(key));
        }
    }
}
