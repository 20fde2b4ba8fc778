package io.latchkey.spi;

/** A lock held in the backend, owned by this handle. Thread-safe. */
public interface BackendLease {

    /** The fencing token of this grant: strictly greater than that of every earlier grant of the lock name. */
    long fencingToken();

    /**
     * Stops renewal and releases the lock in the backend if this handle still owns it; never releases
     * a lock now owned by someone else. Called at most once by the shared layer, from any thread.
     *
     * @throws io.latchkey.LockBackendUnavailableException if the backend could not be reached; the lock
     *     then expires on its own
     */
    void release();
}
