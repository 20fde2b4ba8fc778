package io.latchkey.example.memory;

import io.latchkey.LockOptions;
import io.latchkey.testkit.SemaphoreContract;
import java.util.Collection;

/**
 * The whole semaphore contract against a memory server and backend with a given {@link Flaw}:
 * {@link MemorySemaphoreContractTest} with none, {@link FlawsAreCaughtTest} with each. Abstract and
 * not named like a test, so that it runs only through those.
 */
abstract class MemorySemaphores extends SemaphoreContract<MemoryServerProcess> {

    private final Flaw flaw;

    MemorySemaphores(Flaw flaw) {
        super(MemoryFixture.server(flaw));
        this.flaw = flaw;
    }

    @Override
    protected LockOptions options() {
        return MemoryFixture.options(flaw);
    }

    @Override
    protected void assertNothingLeftInBackend(Collection<String> semaphoreNames) {
        MemoryFixture.assertNoStateLeft(server(), semaphoreNames, "semaphore");
    }
}
