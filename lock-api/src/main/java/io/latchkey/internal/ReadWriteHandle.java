package io.latchkey.internal;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.LockListener.Target.Kind;

/**
 * The application's handle on one read-write lock: its two modes are {@link LockHandle}s of kind
 * {@code READ} and {@code WRITE}, taken on the one acquire path. The rules between a thread's modes
 * are {@link SharedLockClient}'s; the rules between holders are the backend's
 * ({@link io.latchkey.spi.ReadWriteBackend}).
 */
record ReadWriteHandle(SharedLockClient client, String name) implements DistributedReadWriteLock {

    @Override
    public DistributedLock readLock() {
        return new LockHandle(client, name, Kind.READ);
    }

    @Override
    public DistributedLock writeLock() {
        return new LockHandle(client, name, Kind.WRITE);
    }

    @Override
    public String toString() {
        return "DistributedReadWriteLock{'" + name + "' on " + client.backendName() + '}';
    }
}
