package io.latchkey.internal;

import io.latchkey.LockLostException;
import io.latchkey.SemaphoreLease;
import io.latchkey.spi.PermitLease;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One permit of a semaphore, handed to the application as its lease. */
final class PermitGrant implements SemaphoreLease {
    private static final Logger log = LoggerFactory.getLogger(SharedSemaphores.class);

    private final SharedSemaphores semaphores;
    final String name;
    private final int permits;
    private final PermitLease permit;
    private final Validity validity;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicBoolean backendReleased = new AtomicBoolean();

    PermitGrant(SharedSemaphores semaphores, String name, int permits, PermitLease permit, Validity validity) {
        this.semaphores = semaphores;
        this.name = name;
        this.permits = permits;
        this.permit = permit;
        this.validity = validity;
    }

    String subject() {
        return "permit " + permit.slot() + " of semaphore '" + name + "'";
    }

    @Override
    public String lockName() {
        return name;
    }

    @Override
    public int slot() {
        return permit.slot();
    }

    @Override
    public int permits() {
        return permits;
    }

    @Override
    public long fencingToken() {
        return permit.fencingToken();
    }

    @Override
    public boolean isValid() {
        return !closed.get() && validity.isValid();
    }

    @Override
    public void ensureValid() {
        if (closed.get()) {
            throw new IllegalStateException("lease of " + subject() + " is closed");
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
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        boolean lost = validity.loss() != null; // before close(): see Grant.end
        validity.close();
        try {
            if (lost) {
                releaseBackendQuietly();
            } else if (backendReleased.compareAndSet(false, true)) {
                permit.release();
            }
        } finally {
            semaphores.closed(this);
        }
    }

    /** Releases the permit in the backend after a loss; a failure is one WARN line, the permit expires there. */
    void releaseBackendQuietly() {
        if (!backendReleased.compareAndSet(false, true)) {
            return;
        }
        try {
            permit.release();
        } catch (RuntimeException e) {
            log.warn("release of lost {} ({}) failed; it expires on its own: {}", subject(), semaphores.describe(name),
                    e.getMessage());
            log.debug("release of lost {} failed", subject(), e);
        }
    }

    @Override
    public String toString() {
        return "SemaphoreLease{semaphore='" + name + "', slot=" + slot() + " of " + permits + ", token="
                + fencingToken() + ", valid=" + isValid() + '}';
    }
}
