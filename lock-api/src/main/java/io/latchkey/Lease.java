package io.latchkey;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * Proof of holding a distributed lock, until it is closed or lost.
 *
 * <p>Validity is computed on this process's monotonic clock ({@link System#nanoTime()}): from a moment
 * known to precede the backend's last confirmation of ownership, plus the time the backend keeps the
 * lock for a silent holder, minus the {@code safetyMargin}. {@link #isValid()} turns false once that
 * deadline passes, even if the process was paused and has not heard from the backend since, and
 * always no later than the moment the backend can grant the lock to someone else. Loss is never
 * silent: {@link #lost()} completes and the loss is logged.
 *
 * <p>Because a pause can strike between a check and the write that follows, hand
 * {@link #fencingToken()} to the protected resource and let it reject tokens lower than the highest
 * it has seen.
 *
 * <p>Thread-safety: a lease may be used and closed from any thread. {@link #close()} is idempotent
 * and never releases a lock held by someone else.
 */
public interface Lease extends AutoCloseable {

    /** The name of the lock this lease holds. */
    String lockName();

    /**
     * A number strictly greater than the token of every earlier holder of the same lock name, across
     * clients, client restarts and the backend's own cleanup. Nested leases share their holder's token.
     */
    long fencingToken();

    /** Whether the lease is open, not lost, and its conservative validity deadline has not passed. */
    boolean isValid();

    /**
     * Returns if the lease is valid.
     *
     * @throws LockLostException if the lease was lost or its validity deadline passed
     * @throws IllegalStateException if the lease was closed
     */
    void ensureValid();

    /** The conservative time left before the validity deadline; zero once the lease is not valid. */
    Duration remaining();

    /**
     * A stage that completes, with the reason, only if the lease is lost: the backend may have given
     * the lock to someone else (expiry, failed renewal, revocation, a network cut, the validity
     * deadline passing). It never completes for a lease closed normally.
     */
    CompletionStage<LockLostException> lost();

    /**
     * Releases this lease; the lock is released when the last nested lease of its holder closes.
     * Idempotent, callable from any thread.
     *
     * @throws LockBackendUnavailableException if the release did not reach the backend; the lock then
     *     expires on its own within {@code lease}, and this lease is closed all the same
     */
    @Override
    void close();
}
