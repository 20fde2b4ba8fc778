package io.latchkey.jdbc;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Where waiters of this client sleep until a release may have freed what they wait for: a release of
 * this client, or on PostgreSQL a {@code NOTIFY} of any client's release, wakes the waiters of its key
 * ({@code <kind>:<name>}). A waiter never relies on being woken: it sleeps at most until the holder's
 * row expires or the poll interval passes, whichever is first, and tries again.
 *
 * <p>A waiter reads the key's generation before it tries, and sleeps only while it is unchanged, so a
 * release between its attempt and its sleep is not missed. Thread-safe.
 */
final class Wakeups {

    private final Map<String, Signal> signals = new ConcurrentHashMap<>();

    /** The key of a name of one kind: {@code L} lock, {@code S} semaphore, {@code W} read-write lock. */
    static String key(char kind, String name) {
        return kind + ":" + name;
    }

    /** Registers a waiter of {@code key}; {@link #leave} once it stops waiting. */
    Signal join(String key) {
        return signals.compute(key, (k, s) -> {
            Signal signal = s == null ? new Signal() : s;
            signal.waiters++;
            return signal;
        });
    }

    void leave(String key, Signal signal) {
        signals.computeIfPresent(key, (k, s) -> --s.waiters == 0 ? null : s);
    }

    /** Wakes the waiters of {@code key}, if any. */
    void wake(String key) {
        Signal s = signals.get(key);
        if (s != null) {
            s.bump();
        }
    }

    /** Wakes every waiter: after notifications may have been lost. */
    void wakeAll() {
        signals.values().forEach(Signal::bump);
    }

    /** One key's generation, counted up by every release. */
    static final class Signal {
        private int waiters; // guarded by the map's compute
        private long generation;

        synchronized long generation() {
            return generation;
        }

        synchronized void bump() {
            generation++;
            notifyAll();
        }

        /** Sleeps until the generation differs from {@code seen}, or {@code millis} passed. */
        synchronized void await(long seen, long millis) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            long left = millis;
            while (generation == seen && left > 0) {
                wait(left);
                left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
            }
        }
    }
}
