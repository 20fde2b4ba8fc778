package io.latchkey.example.memory;

/** The whole contract, fair ordering included, against the memory server: the test a third-party backend writes. */
class MemoryLockContractTest extends MemoryContract {

    MemoryLockContractTest() {
        super(Flaw.NONE);
    }
}
