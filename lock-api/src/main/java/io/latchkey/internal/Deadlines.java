package io.latchkey.internal;

import java.time.Duration;

/** Deadlines on {@link System#nanoTime()}, saturating instead of overflowing for long waits. */
public final class Deadlines {

    private static final long MAX_WAIT_NANOS = Long.MAX_VALUE / 4;

    private Deadlines() {
    }

    /** The {@code nanoTime} at which {@code wait} from now ends. */
    public static long after(Duration wait) {
        long nanos;
        try {
            nanos = wait.toNanos();
        } catch (ArithmeticException e) {
            nanos = MAX_WAIT_NANOS;
        }
        return System.nanoTime() + Math.min(nanos, MAX_WAIT_NANOS);
    }

    /** Nanoseconds left until {@code deadline}, never negative. */
    public static long remaining(long deadline) {
        return Math.max(0, deadline - System.nanoTime());
    }

    /** Whether {@code deadline} has passed. */
    public static boolean passed(long deadline) {
        return System.nanoTime() - deadline >= 0;
    }
}
