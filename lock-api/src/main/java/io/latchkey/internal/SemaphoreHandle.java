package io.latchkey.internal;

import io.latchkey.DistributedSemaphore;
import io.latchkey.SemaphoreLease;
import java.time.Duration;
import io.latchkey.LockState;
import java.util.List;
import java.util.Optional;

/** The application's handle on one semaphore name; equal to another of the same client, name and permits. */
record SemaphoreHandle(SharedSemaphores semaphores, String name, int permits) implements DistributedSemaphore {

    @Override
    public Optional<SemaphoreLease> tryAcquire(Duration wait) throws InterruptedException {
        return semaphores.acquire(name, permits, SharedLockClient.deadlineAfter(name, wait));
    }

    @Override
    public List<LockState> inspect() throws InterruptedException {
        return semaphores.inspect(name, permits);
    }

    @Override
    public String toString() {
        return "DistributedSemaphore{'" + name + "', " + permits + " permits}";
    }
}
