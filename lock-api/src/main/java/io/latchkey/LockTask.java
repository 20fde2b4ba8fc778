package io.latchkey;

/**
 * A task run under a lock by {@link DistributedLock#runLocked}, given the lease it runs under (to read
 * its fencing token or check its validity).
 */
@FunctionalInterface
public interface LockTask {

    /** Runs the task; any exception is caught and reported in the {@link LockResult}. */
    void run(Lease lease) throws Exception;
}
