package io.latchkey;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Proof of holding every lock of a {@link MultiLock}, until it is closed or one of them is lost.
 *
 * <p>Each name keeps its own {@link Lease}, with its own fencing token, renewal and validity deadline:
 * hand each protected resource the token of the lock that guards it ({@link #fencingToken(String)}).
 * The multi-lease is valid while every one of them is; its {@link #remaining()} is the least of theirs,
 * and {@link #lost()} completes with the first loss. A lost lock is released in the backend at once,
 * as any lost lease is; the others stay held, and valid on their own, until this multi-lease is closed,
 * which try-with-resources does.
 *
 * <p>Thread-safety: usable and closable from any thread; {@link #close()} is idempotent.
 */
public interface MultiLease extends AutoCloseable {

    /** The leases, one per name, in the order of {@link MultiLock#names()}. */
    List<Lease> leases();

    /**
     * The lease of the lock {@code name}.
     *
     * @throws IllegalArgumentException if {@code name} is not one of this multi-lock's names
     */
    Lease lease(String name);

    /** The fencing token of the lock {@code name}; see {@link Lease#fencingToken()}. */
    default long fencingToken(String name) {
        return lease(name).fencingToken();
    }

    /** Whether every lease is valid. */
    boolean isValid();

    /**
     * Returns if every lease is valid.
     *
     * @throws LockLostException for the first lease, in name order, that was lost or whose deadline passed
     * @throws IllegalStateException if this multi-lease was closed
     */
    void ensureValid();

    /** The least time left before a lease's validity deadline; zero once one of them is not valid. */
    Duration remaining();

    /**
     * A stage that completes with the first loss of any of the leases, and never for leases closed
     * normally.
     */
    CompletionStage<LockLostException> lost();

    /**
     * Closes every lease, the last name first. Each is closed even if an earlier close failed.
     * Idempotent, callable from any thread.
     *
     * @throws LockBackendUnavailableException if a release did not reach the backend (further failures
     *     are suppressed on it); those locks expire on their own within {@code lease}
     */
    @Override
    void close();
}
