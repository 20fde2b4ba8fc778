package io.latchkey.example.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockOptions;
import io.latchkey.testkit.SemaphoreContract;
import java.time.Duration;
import java.util.Collection;

/**
 * The whole semaphore contract against a memory server and backend with a given {@link Flaw}:
 * {@link MemorySemaphoreContractTest} with none, {@link FlawsAreCaughtTest} with each. Abstract and
 * not named like a test, so that it runs only through those.
 */
abstract class MemorySemaphores extends SemaphoreContract<MemoryServerProcess> {

    private final Flaw flaw;

    MemorySemaphores(Flaw flaw) {
        super(() -> MemoryServerProcess.start(flaw));
        this.flaw = flaw;
    }

    /** A local server answers at once: a shorter lease and timeout keep the suite quick. */
    @Override
    protected LockOptions options() {
        return LockOptions.builder().lease(Duration.ofSeconds(4)).timeout(Duration.ofSeconds(2))
                .backendOption("flaw", flaw.optionValue()).build();
    }

    @Override
    protected void assertNothingLeftInBackend(Collection<String> semaphoreNames) {
        for (String name : semaphoreNames) {
            assertThat(server().hasState(MemoryLockBackend.key("latchkey", name))).as("server state of semaphore '%s'", name)
                    .isFalse();
        }
    }
}
