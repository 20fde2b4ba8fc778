package io.latchkey;

/**
 * A task with a result, run under a lock by {@link DistributedLock#callLocked}, given the lease it
 * runs under (to read its fencing token or check its validity).
 *
 * @param <T> the type of the result
 */
@FunctionalInterface
public interface LockCallable<T> {

    /** Computes the result; any exception is caught and reported in the {@link LockResult}. */
    T call(Lease lease) throws Exception;
}
