package io.latchkey.internal;

import io.latchkey.Lease;
import io.latchkey.LockLostException;
import io.latchkey.MultiLease;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

/** The {@link MultiLease} of a {@link MultiLockHandle}: one lease per name, in the names' order. */
final class JointLease implements MultiLease {

    private final List<String> names;
    private final List<Lease> leases;
    private final CompletableFuture<LockLostException> lost = new CompletableFuture<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    JointLease(List<String> names, List<Lease> leases) {
        this.names = names;
        this.leases = List.copyOf(leases);
        for (Lease lease : this.leases) {
            lease.lost().thenAccept(lost::complete);
        }
    }

    @Override
    public List<Lease> leases() {
        return leases;
    }

    @Override
    public Lease lease(String name) {
        int i = names.indexOf(name);
        if (i < 0) {
            throw new IllegalArgumentException("multi-lock " + names + " has no lock '" + name + "'; ask for one of its names");
        }
        return leases.get(i);
    }

    @Override
    public boolean isValid() {
        return leases.stream().allMatch(Lease::isValid);
    }

    @Override
    public void ensureValid() {
        if (closed.get()) {
            throw new IllegalStateException("the lease of multi-lock " + names + " is closed");
        }
        leases.forEach(Lease::ensureValid);
    }

    @Override
    public Duration remaining() {
        return leases.stream().map(Lease::remaining).min(Duration::compareTo).orElse(Duration.ZERO);
    }

    @Override
    public CompletionStage<LockLostException> lost() {
        return lost.minimalCompletionStage();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        RuntimeException failure = null;
        for (int i = leases.size() - 1; i >= 0; i--) {
            try {
                leases.get(i).close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "MultiLease{" + names + (closed.get() ? ", closed" : isValid() ? ", valid" : ", invalid") + '}';
    }
}
