package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.LockContract;
import io.latchkey.testkit.LockServer;
import io.latchkey.testkit.redis.RedisServer;
import java.util.Collection;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/** The whole contract against one Redis 7.0 server. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisLockContractTest extends LockContract {

    private RedisServer server;

    @BeforeAll
    void start() {
        server = RedisServer.start();
    }

    @AfterAll
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Override
    protected LockServer server() {
        return server;
    }

    /** Redisson's event loop and timer threads are the library's too. */
    @Override
    protected boolean isLibraryThread(Thread thread) {
        return super.isLibraryThread(thread) || thread.getName().startsWith("redisson-");
    }

    @Override
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        for (String name : lockNames) {
            assertThat(server.cli(List.of(), "EXISTS", RedisLockBackend.DEFAULT_NAMESPACE + ":" + name))
                    .as("lock key of '%s' after close", name).isEqualTo("0");
        }
    }
}
