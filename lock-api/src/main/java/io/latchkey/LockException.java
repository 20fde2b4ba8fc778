package io.latchkey;

/**
 * A lock operation failed in the backend. Every message names the lock and, where there is one, the
 * backend's key, path or topic.
 */
public class LockException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String lockName;

    public LockException(String lockName, String message) {
        super(message);
        this.lockName = lockName;
    }

    public LockException(String lockName, String message, Throwable cause) {
        super(message, cause);
        this.lockName = lockName;
    }

    /** The lock concerned, or {@code null} for a failure that concerns no single lock (connecting). */
    public String lockName() {
        return lockName;
    }
}
