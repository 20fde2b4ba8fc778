package io.latchkey.internal;

import io.latchkey.DistributedSemaphore;
import io.latchkey.SemaphoreLease;
import java.time.Duration;
import java.util.Optional;

/** The application's handle on one semaphore name. */
final class SemaphoreHandle implements DistributedSemaphore {
    private final SharedSemaphores semaphores;
    private final String name;
    private final int permits;

    SemaphoreHandle(SharedSemaphores semaphores, String name, int permits) {
        this.semaphores = semaphores;
        this.name = name;
        this.permits = permits;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int permits() {
        return permits;
    }

    @Override
    public Optional<SemaphoreLease> tryAcquire(Duration wait) throws InterruptedException {
        return semaphores.acquire(name, permits, SharedLockClient.deadlineAfter(name, wait));
    }

    @Override
    public String toString() {
        return "DistributedSemaphore{'" + name + "', " + permits + " permits}";
    }
}
