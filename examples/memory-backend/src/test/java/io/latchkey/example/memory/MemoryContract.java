package io.latchkey.example.memory;

import io.latchkey.LockOptions;
import io.latchkey.testkit.FairOrderingContract;
import java.util.Collection;

/**
 * The whole contract, fair ordering included, against a memory server and backend with a given
 * {@link Flaw}: {@link MemoryLockContractTest} with none, {@link FlawsAreCaughtTest} with each.
 * Abstract and not named like a test, so that it runs only through those.
 */
abstract class MemoryContract extends FairOrderingContract<MemoryServerProcess> {

    private final Flaw flaw;

    MemoryContract(Flaw flaw) {
        super(MemoryFixture.server(flaw));
        this.flaw = flaw;
    }

    @Override
    protected LockOptions options() {
        return MemoryFixture.options(flaw);
    }

    @Override
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        MemoryFixture.assertNoStateLeft(server(), lockNames, "lock");
    }
}
