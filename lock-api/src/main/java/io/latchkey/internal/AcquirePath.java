package io.latchkey.internal;

import io.latchkey.LockException;
import io.latchkey.LockListener.Target;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Deadline;
import java.time.Duration;
import java.util.Locale;

/**
 * The one way the shared layer takes a grant from its backend, for every {@link GrantKind}: the
 * backend's unexpected exceptions become a {@link LockException} naming what was asked for; a grant
 * whose validity ended before the call returned is released and refused; a grant made while the
 * client closed is released and refused; and the listeners hear {@code acquired}, {@code notAcquired},
 * {@code acquireFailed} (with {@code backendUnavailable}) and, later, {@code lost}, through which
 * {@code lock-micrometer} counts every kind alike.
 *
 * <p>What comes before the backend call stays with the kind: a lock's reentrancy and local gate, a
 * semaphore's count check, and the {@link Validity} (a lock's carries its {@code atMost} limit).
 *
 * <p>Thread-safe; one per client.
 */
final class AcquirePath {

    private final SharedLockClient client;

    AcquirePath(SharedLockClient client) {
        this.client = client;
    }

    /**
     * Takes one grant of {@code kind} from the backend, within {@code deadline}.
     *
     * @param validity the grant's validity, handed to the backend as its evidence
     * @param callStart when the application's call began, for the events' wait time
     * @return the grant, handed over to {@code kind}; null if the backend did not grant it by the deadline
     * @throws LockException if the backend failed, or the grant's validity ended before it returned
     * @throws IllegalStateException if the client was closed meanwhile; the grant was released
     */
    <B extends BackendLease, G extends BackendGrant> G acquire(GrantKind<B, G> kind, Deadline deadline,
            Validity validity, long callStart) throws InterruptedException {
        Target target = kind.target();
        B lease;
        try {
            lease = fromBackend(kind, target, deadline, validity);
        } catch (LockException e) {
            client.events().acquireFailed(target, callStart, e);
            throw e;
        }
        if (lease == null) {
            client.events().notAcquired(target, callStart);
            return null;
        }
        G grant = kind.grant(lease, validity);
        if (!validity.start(lost -> {
            client.releaseInBackground(grant::releaseBackendQuietly);
            client.events().lost(grant.target, lost);
        })) {
            grant.releaseBackendQuietly();
            throw new LockException(target.name(), target + " (" + client.describe(target) + ") was granted,"
                    + " but its validity ended before the grant returned: " + validity.describeState()
                    + "; the lease is shorter than an acquire takes, raise the lease option");
        }
        kind.handOver(grant);
        if (client.isClosed()) {
            grant.abandon();
            throw new IllegalStateException("lock client for " + client.backendName() + " was closed while " + target
                    + " was being acquired; the " + target.kind().name().toLowerCase(Locale.ROOT) + " was released");
        }
        client.events().acquired(grant.target, Duration.ofNanos(grant.grantedAt - callStart), grant.token);
        return grant;
    }

    private <B extends BackendLease> B fromBackend(GrantKind<B, ?> kind, Target target, Deadline deadline,
            Validity validity) throws InterruptedException {
        try {
            return kind.acquire(deadline, validity);
        } catch (LockException | IllegalArgumentException | IllegalStateException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new LockException(target.name(), "acquiring " + target + " (" + client.describe(target) + ") failed: " + e, e);
        }
    }
}
