package io.latchkey.internal;

import io.latchkey.LockListener.Target;
import io.latchkey.LockLostException;
import io.latchkey.SemaphoreLease;
import io.latchkey.spi.PermitLease;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

/** One permit of a semaphore, handed to the application as its lease. */
final class PermitGrant extends BackendGrant implements SemaphoreLease {

    private final SharedSemaphores semaphores;
    private final AtomicBoolean closed = new AtomicBoolean();

    /** @param target the permit, with the slot {@code permit} holds */
    PermitGrant(SharedLockClient client, SharedSemaphores semaphores, Target target, PermitLease permit, Validity validity) {
        super(client, target, permit, validity);
        this.semaphores = semaphores;
    }

    @Override
    public String lockName() {
        return target.name();
    }

    @Override
    public int slot() {
        return target.slot();
    }

    @Override
    public int permits() {
        return target.permits();
    }

    @Override
    public long fencingToken() {
        return token;
    }

    @Override
    public boolean isValid() {
        return !closed.get() && validity.isValid();
    }

    @Override
    public void ensureValid() {
        if (closed.get()) {
            throw new IllegalStateException("lease of " + target + " is closed");
        }
        validity.ensureValid();
    }

    @Override
    public Duration remaining() {
        return closed.get() ? Duration.ZERO : validity.remaining();
    }

    @Override
    public CompletionStage<LockLostException> lost() {
        return validity.lostStage();
    }

    @Override
    void abandon() {
        close();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        boolean lost = validity.loss() != null; // before close(): see Grant.end
        validity.close();
        reportReleased(System.nanoTime());
        try {
            releaseBackend(lost);
        } finally {
            semaphores.closed(this);
        }
    }

    @Override
    public String toString() {
        return "SemaphoreLease{semaphore='" + target.name() + "', slot=" + slot() + " of " + permits() + ", token="
                + fencingToken() + ", valid=" + isValid() + '}';
    }
}
