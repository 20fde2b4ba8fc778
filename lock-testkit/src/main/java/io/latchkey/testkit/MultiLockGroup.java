package io.latchkey.testkit;

import io.latchkey.Lease;
import io.latchkey.MultiLease;
import io.latchkey.MultiLock;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.history.History;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What every group of the {@link MultiLockContract} shares: the {@link KitGroup} of every contract,
 * with names, holding a multi-lock and recording its grants, one per name. Not thread-safe except
 * {@link #track}.
 */
abstract class MultiLockGroup extends KitGroup {

    MultiLockGroup() {
        super("multi-lock-contract-", "multi:", "multi");
    }

    @Override
    abstract MultiLockContract<?> contract();

    /** Takes {@code lock} with {@link #patientWait()}, failing if it is not granted; closed after the test. */
    final MultiLease hold(MultiLock lock) throws InterruptedException {
        Optional<MultiLease> lease = lock.tryLock(patientWait());
        if (lease.isEmpty()) {
            throw new AssertionError("multi-lock " + lock.names() + " was not granted within " + patientWait()
                    + " although nothing else should hold its names");
        }
        return track(lease.get());
    }

    /**
     * Records {@code lease}, requested at {@code requestedAt} and returned at {@code grantedAt}, as one grant
     * per name in {@code history}, each checked valid once; returns them in name order.
     */
    static List<History.Grant> record(History history, String actor, MultiLease lease, long requestedAt, long grantedAt) {
        List<History.Grant> grants = new ArrayList<>();
        for (Lease member : lease.leases()) {
            History.Grant grant = history.acquired(actor, member.lockName(), member.fencingToken(), requestedAt, grantedAt);
            grant.check(member::isValid);
            grants.add(grant);
        }
        return grants;
    }

    /** Asks {@code child} for the multi-lock of {@code names} and records it; fails unless it was granted. */
    final List<History.Grant> childHolds(ChildHolder child, List<String> names, History history) {
        ChildHolder.Reply got = child.acquireMulti(names, patientWait(), tryBound(patientWait()).multipliedBy(names.size()));
        if (!got.kind().equals("acquired")) {
            throw child.failure("the child's answer to acquire-multi " + names + ": " + got);
        }
        String[] tokens = got.argument().split(",");
        List<String> ordered = names.stream().sorted().toList();
        List<History.Grant> grants = new ArrayList<>();
        for (int i = 0; i < ordered.size(); i++) {
            grants.add(history.acquired("child-" + child.pid(), ordered.get(i), Long.parseLong(tokens[i]), got.sentAt(),
                    got.receivedAt()));
        }
        return grants;
    }
}
