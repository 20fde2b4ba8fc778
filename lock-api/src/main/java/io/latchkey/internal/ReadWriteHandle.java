package io.latchkey.internal;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.LockListener.Target.Kind;
import io.latchkey.ReadWriteState;
import io.latchkey.spi.ReadWriteRecords;

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
    public ReadWriteState inspect() throws InterruptedException {
        client.ensureOpen();
        ReadWriteRecords held = client.readWriteBackend().inspectReadWrite(name);
        return new ReadWriteState(name, held.readers().stream().map(r -> LockHandle.state(name, r)).toList(),
                held.writer() == null ? null : LockHandle.state(name, held.writer()));
    }

    @Override
    public String toString() {
        return "DistributedReadWriteLock{'" + name + "' on " + client.backendName() + '}';
    }
}
