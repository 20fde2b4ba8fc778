package io.latchkey.bench;

import java.time.Duration;

/**
 * One client connection of one variant (Latchkey or a raw client), as the benchmark drives it.
 *
 * <p>Implementations are thread-safe: several threads of the contended scenario share one. A
 * {@link Held} is released by the thread that acquired it, as the raw clients' thread-owned locks require.
 */
interface Locker extends AutoCloseable {

    /** Acquires {@code name}, waiting at most {@code wait}; {@code null} if it stayed held. */
    Held acquire(String name, Duration wait) throws Exception;

    /**
     * Acquires the write lock ({@code write}) or the read lock of the read-write lock {@code name},
     * waiting at most {@code wait}; {@code null} if it stayed held.
     *
     * @throws UnsupportedOperationException if this variant has no read-write lock (the default)
     */
    default Held acquireMode(String name, boolean write, Duration wait) throws Exception {
        throw new UnsupportedOperationException("no read-write lock");
    }

    /** Disconnects; every lock must have been released. */
    @Override
    void close() throws Exception;

    /** A granted lock. */
    interface Held {
        /** Releases it; called once, by the acquiring thread. */
        void release() throws Exception;
    }
}
