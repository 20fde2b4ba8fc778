package io.latchkey;

/** The backend could not be reached, or did not answer within the bound the caller set. */
public class LockBackendUnavailableException extends LockException {

    private static final long serialVersionUID = 1L;

    public LockBackendUnavailableException(String lockName, String message, Throwable cause) {
        super(lockName, message, cause);
    }
}
