package io.latchkey.example.memory;

import io.latchkey.LockOptions;
import io.latchkey.testkit.ElectionContract;

/** The whole election contract against the memory server: a third-party backend has elections without writing any. */
class MemoryElectionContractTest extends ElectionContract<MemoryServerProcess> {

    MemoryElectionContractTest() {
        super(MemoryFixture.server(Flaw.NONE));
    }

    @Override
    protected LockOptions options() {
        return MemoryFixture.options(Flaw.NONE);
    }
}
