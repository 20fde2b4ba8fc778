package io.latchkey.zookeeper;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.spi.Durations;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Notices that this process itself was paused (SIGSTOP, a long garbage collection, an overloaded host)
 * while a caller waited, so that a call that overran its bound says so instead of blaming the servers.
 *
 * <p>The waiting thread wakes at least every {@value #TICK_MS} ms; a wake-up that comes later than
 * asked by more than the smaller of one second and the {@code timeout} option counts as a pause of
 * that length. {@link System#nanoTime()} keeps counting while a process is stopped, so the gap is the
 * pause. Used by one waiting thread at a time; not thread-safe.
 */
final class PauseWatch {

    static final long TICK_MS = 100;
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(TICK_MS);

    private final long thresholdNanos;
    private long lastWake = System.nanoTime();
    private long longestNanos;

    PauseWatch(Duration timeout) {
        this.thresholdNanos = Math.min(TimeUnit.SECONDS.toNanos(1), timeout.toNanos());
    }

    /** The waiting thread woke after asking to sleep {@code napNanos}. */
    void woke(long napNanos) {
        long now = System.nanoTime();
        long gap = now - lastWake;
        lastWake = now;
        if (gap - napNanos > thresholdNanos) {
            longestNanos = Math.max(longestNanos, gap);
        }
    }

    boolean paused() {
        return longestNanos > 0;
    }

    /**
     * The exception for a call that overran its bound: saying this process was paused if it was,
     * otherwise with {@code otherwise} as the message.
     */
    LockBackendUnavailableException unavailable(String lockName, String where, Throwable cause, String otherwise) {
        return unavailable(lockName, "lock '" + lockName + "'", where, cause, otherwise);
    }

    /** As {@link #unavailable(String, String, Throwable, String)}, about {@code subject} ("semaphore 'x'"). */
    LockBackendUnavailableException unavailable(String lockName, String subject, String where, Throwable cause,
            String otherwise) {
        if (!paused()) {
            return new LockBackendUnavailableException(lockName, otherwise, cause);
        }
        Duration pause = Duration.ofMillis(TimeUnit.NANOSECONDS.toMillis(longestNanos));
        return new LockBackendUnavailableException(lockName, subject + " (" + where + ") was not acquired:"
                + " this process was paused for " + Durations.format(pause) + " while it waited (a stopped process, a"
                + " long garbage collection or an overloaded host), past the caller's wait; zookeeper may have expired"
                + " this client's session meanwhile; try again", cause);
    }
}
