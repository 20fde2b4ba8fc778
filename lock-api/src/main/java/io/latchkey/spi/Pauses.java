package io.latchkey.spi;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Tells a call that gave up because this process itself was paused (stopped with SIGSTOP, in a long
 * garbage collection, starved on an overloaded host, a suspended VM) from one the backend left
 * unanswered, and words the message once for every backend: "this process was paused for at least N
 * while ...".
 *
 * <p>The evidence is the call's own clock, {@link System#nanoTime()}, which keeps counting while a
 * process is stopped. A call that began at {@code start} with the bound {@code bound} gives up at its
 * bound however slow the server is; one that gives up more than {@code max(bound, 1s)} past it was not
 * running meanwhile, so the overrun is the pause ({@link #pause()}). A waiting thread that sleeps in
 * short naps may add a finer kind of evidence with {@link #woke(long)}: a wake-up that comes later
 * than asked by more than the smaller of one second and the bound is a pause of that excess, even
 * when the call as a whole overran little (a pause early in a long wait).
 *
 * <p>A backend builds one per call and, on its timeout and unavailability paths, passes the exception
 * it would throw through {@link #explain}: unchanged if the process was not paused, otherwise the same
 * {@link LockBackendUnavailableException} told as a pause. The server is not blamed then: whether it
 * answers was never learnt, since this process was not there to hear it.
 *
 * <p>Not thread-safe: one call's thread uses it. {@link #sentence} is thread-safe.
 */
public final class Pauses {

    /** The least overrun, and the most a wake-up may be late, before either counts as a pause. */
    private static final long FLOOR_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final long startNanos;
    private final Duration bound;
    private final long lateNanos;
    private long lastWake;
    private long longestLate;

    private Pauses(long startNanos, Duration bound) {
        this.startNanos = startNanos;
        this.bound = bound.isNegative() ? Duration.ZERO : bound;
        this.lateNanos = Math.min(FLOOR_NANOS, Math.max(1, saturatedNanos(this.bound)));
        this.lastWake = startNanos;
    }

    /**
     * The pause evidence of a call that began at {@code startNanos} (a value of {@link System#nanoTime()})
     * and gives up at {@code bound} after it.
     */
    public static Pauses since(long startNanos, Duration bound) {
        return new Pauses(startNanos, bound);
    }

    /** {@link #since} for a call that begins now and gives up when {@code end} passes. */
    public static Pauses until(Deadline end) {
        long now = System.nanoTime();
        return new Pauses(now, Duration.ofNanos(Math.max(0, end.nanoTime() - now)));
    }

    /** The waiting thread woke after asking to sleep {@code napNanos}; a wake-up late by far is a pause. */
    public void woke(long napNanos) {
        long now = System.nanoTime();
        long late = now - lastWake - Math.max(0, napNanos);
        lastWake = now;
        if (late > lateNanos) {
            longestLate = Math.max(longestLate, late);
        }
    }

    /**
     * How long this process was paused during the call, as far as its clock shows now: the larger of
     * the overrun past the bound (if more than {@code max(bound, 1s)}) and the latest wake-up reported
     * to {@link #woke}; empty if neither shows a pause.
     */
    public Optional<Duration> pause() {
        long boundNanos = saturatedNanos(bound);
        long over = System.nanoTime() - startNanos - boundNanos;
        long paused = over > Math.max(boundNanos, FLOOR_NANOS) ? over : 0;
        paused = Math.max(paused, longestLate);
        // whole milliseconds, so that the message reads 15234ms rather than nanoseconds
        return paused > 0 ? Optional.of(Duration.ofMillis(TimeUnit.NANOSECONDS.toMillis(paused))) : Optional.empty();
    }

    /** The bound this call was given. */
    public Duration bound() {
        return bound;
    }

    /**
     * {@code failure} as a backend would throw it, or, if it says the backend is unavailable and this
     * process was paused during the call, a {@link LockBackendUnavailableException} that says so
     * instead: {@code subject} followed by {@link #sentence}, with {@code failure}'s cause.
     *
     * @param lockName the lock, or null while connecting
     * @param subject how the backend's messages begin, naming the lock and its key (such as
     *     {@code "lock 'job' (redis key 'latchkey:job'): "}); may be empty
     * @param doing what the call did, as a gerund phrase ({@code "acquiring lock 'job'"}), or null
     * @param backend the backend's name as messages give it ({@code "redis"}, {@code "etcd at ..."})
     */
    public LockException explain(LockException failure, String lockName, String subject, String doing, String backend) {
        if (!(failure instanceof LockBackendUnavailableException)) {
            return failure;
        }
        return pause().<LockException>map(p -> new LockBackendUnavailableException(lockName,
                subject + sentence(p, bound, doing, backend), failure.getCause())).orElse(failure);
    }

    /** {@link #explain} for an unavailability, keeping its type. */
    public LockBackendUnavailableException explain(LockBackendUnavailableException failure, String lockName,
            String subject, String doing, String backend) {
        return (LockBackendUnavailableException) explain((LockException) failure, lockName, subject, doing, backend);
    }

    /**
     * The message for a call of bound {@code bound} during which this process was paused for
     * {@code pause}, the same on every backend: {@code "this process was paused for at least 15234ms while
     * acquiring lock 'job', a call bounded by 7500ms: ..."}, durations as {@link Durations#format} writes
     * them, the bound to the nearest millisecond. "At least": the overrun is the part of the pause that
     * fell past the bound, and a late wake-up the part beyond the nap asked for.
     *
     * @param doing what the call did, as a gerund phrase, or null
     */
    public static String sentence(Duration pause, Duration bound, String doing, String backend) {
        return "this process was paused for at least " + Durations.format(pause)
                + (doing == null || doing.isEmpty() ? "" : " while " + doing)
                + ", a call bounded by " + Durations.format(toMillis(bound)) + ": the process was stopped, in a long garbage"
                + " collection or starved on an overloaded host, so the time went by here rather than waiting for "
                + backend + "; find what paused the process, then try again";
    }

    private static Duration toMillis(Duration d) {
        try {
            return Duration.ofMillis((d.toNanos() + 500_000) / 1_000_000);
        } catch (ArithmeticException e) {
            return d; // centuries: printed in hours anyway
        }
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 4;
        }
    }
}
