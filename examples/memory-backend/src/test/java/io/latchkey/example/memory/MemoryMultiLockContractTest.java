package io.latchkey.example.memory;

import io.latchkey.LockOptions;
import io.latchkey.testkit.MultiLockContract;
import java.util.Collection;

/** The whole multi-lock contract against the memory server: a third-party backend has multi-locks without writing any. */
class MemoryMultiLockContractTest extends MultiLockContract<MemoryServerProcess> {

    MemoryMultiLockContractTest() {
        super(MemoryFixture.server(Flaw.NONE));
    }

    @Override
    protected LockOptions options() {
        return MemoryFixture.options(Flaw.NONE);
    }

    @Override
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
        MemoryFixture.assertNoStateLeft(server(), lockNames, "lock");
    }
}
