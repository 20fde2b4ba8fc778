package io.latchkey.internal;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockListener.Target;
import io.latchkey.spi.BackendLease;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One grant of the backend, of any kind: the backend's lease, its {@link Validity}, and its release,
 * at most once, quietly after a loss. {@link Grant} (a lock's) and {@link PermitGrant} (a permit's)
 * add how the application holds it; {@link AcquirePath} makes every kind the same way.
 */
abstract class BackendGrant {
    private static final Logger log = LoggerFactory.getLogger(SharedLockClient.class);

    final SharedLockClient client;
    /** Whom events and messages name: the lock, or the permit with its slot. */
    final Target target;
    final BackendLease backendLease;
    final Validity validity;
    final long token;
    final long grantedAt = System.nanoTime();
    final AtomicBoolean backendReleased = new AtomicBoolean();

    BackendGrant(SharedLockClient client, Target target, BackendLease backendLease, Validity validity) {
        this.client = client;
        this.target = target;
        this.backendLease = backendLease;
        this.validity = validity;
        this.token = backendLease.fencingToken();
    }

    /** Ends a grant made while the client closed, releasing it; for {@link AcquirePath}. */
    abstract void abandon();

    /** Tells the listeners that the grant ended at {@code endedAt}. */
    final void reportReleased(long endedAt) {
        Duration held = Duration.ofNanos(endedAt - grantedAt);
        client.events().released(target, held);
    }

    /**
     * Releases the backend's lease, once: quietly if the grant was {@code lost}, else reporting an
     * unreachable backend to the listeners and to the caller.
     */
    final void releaseBackend(boolean lost) {
        if (lost) {
            // closing a lost lease is no error: its release is a courtesy to the next holder, and a backend
            // that cannot confirm it (the session or key is gone, the network still cut) is one WARN line
            releaseBackendQuietly();
            return;
        }
        if (!backendReleased.compareAndSet(false, true)) {
            return;
        }
        try {
            backendLease.release();
        } catch (LockBackendUnavailableException e) {
            client.events().backendUnavailable(target, e);
            throw e;
        }
    }

    /** Releases the backend's lease after a loss; a failure is one WARN line, the lease expires there. */
    final void releaseBackendQuietly() {
        if (!backendReleased.compareAndSet(false, true)) {
            return;
        }
        try {
            backendLease.release();
        } catch (RuntimeException e) {
            if (e instanceof LockBackendUnavailableException unavailable) {
                client.events().backendUnavailable(target, unavailable);
            }
            // Expected when the loss came from losing the backend: one line, the trace only for debugging.
            log.warn("release of lost {} ({}) failed; it expires on its own: {}", target, client.describe(target),
                    e.getMessage());
            log.debug("release of lost {} failed", target, e);
        }
    }
}
