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
    final Semaphore gate = new Semaphore(1, true);
    int refs; // guarded by the map's compute
    Grant grant; // guarded by this
    Thread owner; // guarded by this; null for a lease acquired asynchronously

    LocalLock(Object key, String name, Target target) {
        this.key = key;
        this.name = name;
        this.target = target;
    }

    /**
     * The key of a read-write lock's gate: its writers share one ({@code holder} null); each reading
     * thread, and each asynchronous read, has its own ({@code holder} the thread, or an object of the call).
     */
    record ModeKey(String name, boolean write, Object holder) {
    }
}
