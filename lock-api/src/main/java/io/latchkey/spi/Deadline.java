package io.latchkey.spi;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A point on this process's monotonic clock ({@link System#nanoTime()}) by which a call must return.
 *
 * <p>The shared layer hands one to {@link LockBackend#acquire}: the caller's wait, measured from the
 * moment the call began. Waits too long to represent (a {@code Duration} of centuries) saturate
 * instead of overflowing, so arithmetic on a deadline never wraps around into the past.
 *
 * <p>Immutable and thread-safe.
 */
public final class Deadline {

    // A quarter of the range, so that a saturated deadline plus any realistic timeout still does not wrap.
    private static final long MAX_NANOS = Long.MAX_VALUE / 4;

    private final long nanoTime;

    private Deadline(long nanoTime) {
        this.nanoTime = nanoTime;
    }

    /** The deadline {@code wait} from now; a negative wait is the deadline now. */
    public static Deadline after(Duration wait) {
        return new Deadline(System.nanoTime() + saturatedNanos(wait));
    }

    /** A deadline at {@code nanoTime}, a value of {@link System#nanoTime()}. */
    public static Deadline atNanoTime(long nanoTime) {
        return new Deadline(nanoTime);
    }

    /** This deadline moved later by {@code extra}: for example the caller's wait plus one round trip. */
    public Deadline plus(Duration extra) {
        return new Deadline(nanoTime + saturatedNanos(extra));
    }

    /**
     * The bound of a call whose wait ends at this deadline: this deadline plus {@code timeout}, the
     * {@link io.latchkey.LockOptions#timeout() timeout option}, the one round trip that the last attempt
     * of the wait may still take. {@link LockBackend#acquire} and {@link SemaphoreBackend#acquirePermit}
     * return or throw by then (contract: {@code tryLock(wait)} within {@code wait + timeout}); a backend
     * bounds its waits for answers with this rather than adding the two itself, so that every backend
     * means the same bound. A bound that deliberately allows more (a cold JVM's start-up allowance, say)
     * is not this one and says so where it is computed.
     *
     * @param timeout the timeout option; a negative one counts as zero
     */
    public Deadline callBound(Duration timeout) {
        return plus(timeout);
    }

    /** The {@link System#nanoTime()} value at which this deadline passes. */
    public long nanoTime() {
        return nanoTime;
    }

    /** Nanoseconds left, never negative. */
    public long remainingNanos() {
        return Math.max(0, nanoTime - System.nanoTime());
    }

    /** Milliseconds left, rounded down, never negative: for client libraries that take milliseconds. */
    public long remainingMillis() {
        return TimeUnit.NANOSECONDS.toMillis(remainingNanos());
    }

    /** The time left, never negative. */
    public Duration remaining() {
        return Duration.ofNanos(remainingNanos());
    }

    /**
     * How far past this deadline the clock is now; zero if it has not passed. For timeout messages: a
     * call that gives up with an overrun far beyond its own scheduling (more than the round trip it
     * allowed, say) was not slowed by the server but paused with its whole process (a long GC,
     * SIGSTOP, a suspended VM), and the message should say "this process was paused for N" rather
     * than blame the backend: {@link Pauses} decides that and words it.
     */
    public Duration overrun() {
        return Duration.ofNanos(Math.max(0, System.nanoTime() - nanoTime));
    }

    /** Whether the deadline has passed. */
    public boolean hasPassed() {
        return System.nanoTime() - nanoTime >= 0;
    }

    /** The earlier of this deadline and {@code other}. */
    public Deadline min(Deadline other) {
        return nanoTime - other.nanoTime <= 0 ? this : other;
    }

    @Override
    public String toString() {
        return hasPassed() ? "Deadline{passed}" : "Deadline{in " + Durations.format(remaining()) + '}';
    }

    private static long saturatedNanos(Duration d) {
        if (d.isNegative()) {
            return 0;
        }
        try {
            return Math.min(d.toNanos(), MAX_NANOS);
        } catch (ArithmeticException e) {
            return MAX_NANOS;
        }
    }
}
