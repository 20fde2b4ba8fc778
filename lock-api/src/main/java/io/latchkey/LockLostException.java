package io.latchkey;

/**
 * A lease is no longer valid: the backend may have given the lock to someone else. Work protected by
 * the lease must stop; the lease should be closed.
 */
public class LockLostException extends LockException {

    private static final long serialVersionUID = 1L;

    public LockLostException(String lockName, String message) {
        super(lockName, message);
    }

    public LockLostException(String lockName, String message, Throwable cause) {
        super(lockName, message, cause);
    }
}
