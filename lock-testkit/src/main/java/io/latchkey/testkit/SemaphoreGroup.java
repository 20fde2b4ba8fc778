package io.latchkey.testkit;

import io.latchkey.DistributedSemaphore;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.history.History;
import java.util.Optional;

/**
 * What every group of the {@link SemaphoreContract} shares: the {@link KitGroup} of every contract,
 * with semaphore names, holding a permit and a child holding one. Not thread-safe except
 * {@link #track}.
 */
abstract class SemaphoreGroup extends KitGroup {

    SemaphoreGroup() {
        super("semaphore-contract-", "semaphore:", "sem");
    }

    @Override
    abstract SemaphoreContract<?> contract();

    /** Takes a permit with {@link #patientWait()}, failing if none is granted; closed after the test. */
    final SemaphoreLease hold(DistributedSemaphore semaphore) throws InterruptedException {
        Optional<SemaphoreLease> lease = semaphore.tryAcquire(patientWait());
        if (lease.isEmpty()) {
            throw new AssertionError("no permit of semaphore '" + semaphore.name() + "' (" + semaphore.permits()
                    + " permits) was granted within " + patientWait() + " although one should be free");
        }
        return track(lease.get());
    }

    /** A lease and its record in a history. */
    record Held(SemaphoreLease lease, History.Grant grant) {
    }

    /** Takes a permit like {@link #hold} and records it in {@code history}, checking its validity once. */
    final Held hold(DistributedSemaphore semaphore, History history, String actor) throws InterruptedException {
        long requested = History.now();
        SemaphoreLease lease = hold(semaphore);
        History.Grant grant = history.acquiredPermit(actor, semaphore.name(), lease.slot(), lease.fencingToken(),
                requested, History.now());
        grant.check(lease::isValid);
        return new Held(lease, grant);
    }

    /** Asks {@code child} for a permit and records it; fails unless it was granted. */
    final History.Grant childHolds(ChildHolder child, String name, int permits, History history) {
        ChildHolder.Reply got = child.acquirePermit(name, permits, patientWait(), tryBound(patientWait()));
        if (!got.kind().equals("acquired")) {
            throw child.failure("the child's answer to acquire-permit: " + got);
        }
        String[] tokenAndSlot = got.argument().split(" ");
        return history.acquiredPermit("child-" + child.pid(), name, Integer.parseInt(tokenAndSlot[1]),
                Long.parseLong(tokenAndSlot[0]), got.sentAt(), got.receivedAt());
    }
}
