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

    /** Disconnects; every lock must have been released. */
    @Override
    void close() throws Exception;

    /** A granted lock. */
    interface Held {
        /** Releases it; called once, by the acquiring thread. */
        void release() throws Exception;
    }
}
