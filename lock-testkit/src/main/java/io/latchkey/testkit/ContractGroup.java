package io.latchkey.testkit;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.testkit.history.History;
import java.util.Optional;

/**
 * What every group of the {@link LockContract} shares: the {@link KitGroup} of every contract, with
 * lock names and holding a lock.
 *
 * <p>One instance per test (the JUnit default); not thread-safe except {@link #track}.
 */
abstract class ContractGroup extends KitGroup {

    ContractGroup() {
        super("contract-", "contract:", "lock");
    }

    /** The contract this group belongs to (the enclosing instance). */
    @Override
    abstract LockContract<?> contract();

    /** Acquires {@code lock} with {@link #patientWait()}, fails if it stays held; the lease is closed after the test. */
    final Lease hold(DistributedLock lock) throws InterruptedException {
        Optional<Lease> lease = lock.tryLock(patientWait());
        if (lease.isEmpty()) {
            throw new AssertionError("lock '" + lock.name() + "' was not granted within " + patientWait()
                    + " although nothing else should hold it");
        }
        return track(lease.get());
    }

    /** A lease and its record in a history. */
    record Held(Lease lease, History.Grant grant) {
    }

    /** Acquires like {@link #hold} and records the grant in {@code history}, checking its validity once. */
    final Held hold(DistributedLock lock, History history, String actor) throws InterruptedException {
        long requested = History.now();
        Lease lease = hold(lock);
        History.Grant grant = history.acquired(actor, lock.name(), lease.fencingToken(), requested, History.now());
        grant.check(lease::isValid);
        return new Held(lease, grant);
    }
}
