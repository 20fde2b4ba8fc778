package io.latchkey.internal;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockLostException;
import io.latchkey.MultiLease;
import io.latchkey.MultiLock;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link MultiLock} on any {@link LockClient}: the client's own locks, taken one by one in the names'
 * global order within one deadline, and released, the last first, if the call does not end holding
 * them all. Built on the public lock API only, so that every backend has it; a backend that could take
 * several names in one round trip would be an optimisation of this, not a different promise.
 */
record MultiLockHandle(LockClient client, List<String> names, List<DistributedLock> locks) implements MultiLock {

    private static final Logger log = LoggerFactory.getLogger(MultiLockHandle.class);

    /** Checks the names, each once, and orders them; takes the client's lock handles (which checks it is open). */
    static MultiLockHandle of(LockClient client, Collection<String> names) {
        Objects.requireNonNull(client, "client");
        List<String> ordered = checkNames(names);
        return new MultiLockHandle(client, ordered, ordered.stream().map(client::lock).toList());
    }

    /** Each name by the rule of names and once; returns them in the order they are taken. */
    static List<String> checkNames(Collection<String> names) {
        Objects.requireNonNull(names, "names");
        if (names.isEmpty()) {
            throw new IllegalArgumentException("a multi-lock needs at least one lock name, and none was given");
        }
        TreeSet<String> sorted = new TreeSet<>();
        for (String name : names) {
            LockNames.validate(Objects.requireNonNull(name, "a lock name of a multi-lock is null"));
            if (!sorted.add(name)) {
                throw new IllegalArgumentException("multi-lock " + names + " names lock '" + name
                        + "' twice; give each name once");
            }
        }
        return List.copyOf(sorted);
    }

    @Override
    public Optional<MultiLease> tryLock(Duration wait) throws InterruptedException {
        Objects.requireNonNull(wait, "wait");
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait for multi-lock " + names + " must not be negative: "
                    + Durations.format(wait));
        }
        Deadline deadline = Deadline.after(wait);
        List<Lease> held = new ArrayList<>(locks.size());
        Throwable failure = null;
        try {
            for (DistributedLock lock : locks) {
                Optional<Lease> lease = lock.tryLock(deadline.remaining());
                if (lease.isEmpty()) {
                    return Optional.empty();
                }
                held.add(lease.get());
            }
            for (Lease lease : held) {
                if (!lease.isValid()) {
                    throw new LockException(lease.lockName(), "lock '" + lease.lockName() + "' of multi-lock " + names
                            + " was lost while the call waited for the others: " + lossOf(lease)
                            + "; every lock of it was released, try again");
                }
            }
            MultiLease lease = new JointLease(names, held);
            held = List.of();
            return Optional.of(lease);
        } catch (InterruptedException | RuntimeException | Error e) {
            failure = e;
            throw e;
        } finally {
            release(held, failure);
        }
    }

    /** Closes what a failed or empty call took, the last first; a failed release joins the call's own exception. */
    private void release(List<Lease> held, Throwable failure) {
        for (int i = held.size() - 1; i >= 0; i--) {
            try {
                held.get(i).close();
            } catch (RuntimeException e) {
                if (failure != null) {
                    failure.addSuppressed(e);
                } else {
                    log.warn("multi-lock {}: releasing lock '{}' after the call took not all of them failed; it"
                            + " expires on its own", names, held.get(i).lockName(), e);
                }
            }
        }
    }

    private static String lossOf(Lease lease) {
        try {
            lease.ensureValid();
            return "its validity ended";
        } catch (LockLostException e) {
            return e.getMessage();
        }
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return locks.stream().allMatch(DistributedLock::isHeldByCurrentThread);
    }

    @Override
    public String toString() {
        return "MultiLock{" + names + " on " + client.backendName() + '}';
    }
}
