package io.latchkey.testkit;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.history.History;
import java.util.Optional;

/**
 * What every group of the {@link ReadWriteContract} shares: the {@link KitGroup} of every contract,
 * with names, holding a mode of a read-write lock and recording its grant with its mode. Not
 * thread-safe except {@link #track}.
 */
abstract class ReadWriteGroup extends KitGroup {

    ReadWriteGroup() {
        super("read-write-contract-", "rw:", "rw");
    }

    @Override
    abstract ReadWriteContract<?> contract();

    /** Takes {@code mode} with {@link #patientWait()}, failing if it is not granted; closed after the test. */
    final Lease hold(DistributedLock mode) throws InterruptedException {
        Optional<Lease> lease = mode.tryLock(patientWait());
        if (lease.isEmpty()) {
            throw new AssertionError(mode + " was not granted within " + patientWait()
                    + " although nothing else should hold it");
        }
        return track(lease.get());
    }

    /** Records {@code lease} of read-write lock {@code name} in {@code history}, checked valid once. */
    static History.Grant record(History history, String actor, boolean write, Lease lease, long requestedAt, long grantedAt) {
        History.Grant grant = history.acquiredMode(actor, lease.lockName(), write, lease.fencingToken(), requestedAt, grantedAt);
        grant.check(lease::isValid);
        return grant;
    }

    /** Asks {@code child} for {@code name}'s write ({@code write}) or read lock and records it; fails unless granted. */
    final History.Grant childHolds(ChildHolder child, String name, boolean write, History history) {
        ChildHolder.Reply got = child.acquireMode(name, write, patientWait(), tryBound(patientWait()));
        if (!got.kind().equals("acquired")) {
            throw child.failure("the child's answer to acquire-" + (write ? "write " : "read ") + name + ": " + got);
        }
        return history.acquiredMode("child-" + child.pid(), name, write, Long.parseLong(got.argument()), got.sentAt(),
                got.receivedAt());
    }
}
