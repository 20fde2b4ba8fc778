package io.latchkey;

import java.time.Duration;

/** {@link DistributedLock#lock(Duration)} waited its whole time and the lock stayed held by someone else. */
public class LockNotAcquiredException extends LockException {

    private static final long serialVersionUID = 1L;

    public LockNotAcquiredException(String lockName, Duration wait) {
        super(lockName, "lock '" + lockName + "' is still held by another holder after waiting " + wait
                + "; wait longer or use tryLock to treat a held lock as a normal outcome");
    }

    /** For other waits than a lock's, such as a semaphore's: {@code message} says what stayed taken. */
    public LockNotAcquiredException(String lockName, String message) {
        super(lockName, message);
    }
}
