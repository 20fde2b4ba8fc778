package io.latchkey.example.memory;

/** The whole semaphore contract against the memory server: the test a third-party backend with semaphores writes. */
class MemorySemaphoreContractTest extends MemorySemaphores {

    MemorySemaphoreContractTest() {
        super(Flaw.NONE);
    }
}
