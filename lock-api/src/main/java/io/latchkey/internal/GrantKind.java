package io.latchkey.internal;

import io.latchkey.LockListener;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.LeaseEvidence;

/**
 * What one attempt of one kind of grant asks of {@link AcquirePath}: whom it names, the backend call,
 * the grant it makes of the backend's lease, and where it keeps that grant. Everything else an acquire
 * does (translating the backend's exceptions, refusing a grant whose validity ended before it returned
 * or whose client closed meanwhile, the listener events) is the path's, once for every kind.
 *
 * <p>An implementation lives one call, beside the kind's own state: a lock's attempt holds the name's
 * local gate, a permit's the semaphore's count. A new kind of grant (a read or write mode, a
 * multi-lock, an election term) implements this, adds a {@link LockListener.Target.Kind}, and
 * subclasses {@link BackendGrant}.
 *
 * @param <B> the backend's lease of this kind
 * @param <G> the grant the shared layer keeps for it
 */
interface GrantKind<B extends BackendLease, G extends BackendGrant> {

    /** Whom this attempt's events and messages name before the grant: {@code lock 'x'}, {@code a permit of semaphore 'x'}. */
    LockListener.Target target();

    /**
     * Asks the backend, reporting the grant and its renewals to {@code evidence}.
     *
     * @return the backend's lease, or null if it was not granted by the deadline
     */
    B acquire(Deadline deadline, LeaseEvidence evidence) throws InterruptedException;

    /** The grant of {@code lease}, not yet shared with anyone; called once, before its validity starts. */
    G grant(B lease, Validity validity);

    /**
     * Records the grant where the client's close finds it. From here on the grant owns what the attempt
     * held (a lock's local permit, a semaphore's count) and gives it back when it ends.
     */
    void handOver(G grant);
}
