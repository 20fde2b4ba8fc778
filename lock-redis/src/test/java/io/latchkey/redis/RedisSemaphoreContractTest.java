package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.SemaphoreContract;
import io.latchkey.testkit.redis.RedisServer;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;

/** The whole semaphore contract against the Redis 7.0 server {@link RedisLockContractTest} and {@link RedisLockTest} use. */
class RedisSemaphoreContractTest extends SemaphoreContract<RedisServer> {

    RedisSemaphoreContractTest() {
        super(RedisLockTest.SERVER_KEY, RedisServer::start);
    }

    /** Redisson's event loop and timer threads are the library's too. */
    @Override
    protected boolean isLibraryThread(Thread thread) {
        return super.isLibraryThread(thread) || thread.getName().startsWith("redisson-");
    }

    /** Of every key of a semaphore (all of them carry its hash tag), only its token counter remains. */
    @Override
    protected void assertNothingLeftInBackend(Collection<String> semaphoreNames) {
        for (String name : semaphoreNames) {
            String tag = RedisKeys.semaphoreTag(RedisLockBackend.DEFAULT_NAMESPACE + ":", name);
            assertThat(keysWithTag(server(), tag)).as("keys of semaphore '%s' after close", name)
                    .containsExactly(RedisKeys.semaphoreTokenKey(tag));
        }
    }

    /** Every key on {@code server} that holds {@code tag}, found by the server rather than predicted. */
    static List<String> keysWithTag(RedisServer server, String tag) {
        String pattern = "*" + tag.replaceAll("([*?\\[\\]\\\\])", "\\\\$1") + "*";
        return Arrays.stream(server.cli(List.of(), "KEYS", pattern).split("\r?\n")).map(String::trim)
                .filter(k -> !k.isEmpty()).sorted().toList();
    }
}
