package io.latchkey.example.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockOptions;
import io.latchkey.testkit.FairOrderingContract;
import java.time.Duration;
import java.util.Collection;

/**
 * The whole contract, fair ordering included, against a memory server and backend with a given
 * {@link Flaw}: {@link MemoryLockContractTest} with none, {@link FlawsAreCaughtTest} with each.
 * Abstract and not named like a test, so that it runs only through those.
 */
abstract class MemoryContract extends FairOrderingContract<MemoryServerProcess> {

    private final Flaw flaw;

    MemoryContract(Flaw flaw) {
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
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        for (String name : lockNames) {
            assertThat(server().hasState(MemoryLockBackend.key("latchkey", name))).as("server state of lock '%s'", name).isFalse();
        }
    }
}
