package io.latchkey.internal;

import io.latchkey.LockListener.Target;
import java.util.concurrent.Semaphore;

/**
 * Local state of one gate of this client: a lock name, a read-write lock's writers, or one reader of a
 * read-write lock (a thread, or one asynchronous call). The key is what {@link SharedLockClient} maps
 * it under: the name for a lock, a {@link ModeKey} for a read-write lock.
 */
final class LocalLock {
    final Object key;
    final String name;
    final Target target;
    final Semaphore gate;
    int refs; // guarded by the map's compute
    Grant grant; // guarded by this
    Thread owner; // guarded by this; null for a lease acquired asynchronously

    /**
     * @param fair whether the gate admits this client's threads in arrival order
     *     ({@link io.latchkey.spi.LockBackend#fairOrder})
     */
    LocalLock(Object key, String name, Target target, boolean fair) {
        this.key = key;
        this.name = name;
        this.target = target;
        this.gate = new Semaphore(1, fair);
    }

    /**
     * The key of a read-write lock's gate: its writers share one ({@code holder} null); each reading
     * thread, and each asynchronous read, has its own ({@code holder} the thread, or an object of the call).
     */
    record ModeKey(String name, boolean write, Object holder) {
    }
}
