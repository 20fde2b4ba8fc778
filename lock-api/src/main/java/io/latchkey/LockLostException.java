package io.latchkey;

import java.util.Objects;

/**
 * A lease is no longer valid: the backend may have given the lock to someone else. Work protected by
 * the lease must stop; the lease should be closed.
 *
 * <p>{@link #reason()} classifies the loss in a small fixed set, for metrics and alerts; the message
 * says the details.
 */
public class LockLostException extends LockException {

    private static final long serialVersionUID = 1L;

    /** Why a lease was lost, in a small fixed set. */
    public enum Reason {
        /** The backend said so: session expired, renewal refused, partition revoked, key gone. */
        BACKEND,
        /** No confirmation from the backend in time: the validity deadline (lease minus margin) passed. */
        EXPIRED,
        /** The request's {@code atMost} bound ended the lease. */
        AT_MOST
    }

    private final Reason reason;

    public LockLostException(String lockName, String message) {
        this(lockName, message, null, Reason.BACKEND);
    }

    public LockLostException(String lockName, String message, Throwable cause) {
        this(lockName, message, cause, cause instanceof LockLostException l ? l.reason : Reason.BACKEND);
    }

    public LockLostException(String lockName, String message, Throwable cause, Reason reason) {
        super(lockName, message, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    /** The kind of loss. */
    public Reason reason() {
        return reason;
    }
}
