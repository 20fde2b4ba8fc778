package io.latchkey.testkit;

import io.latchkey.spi.LockBackend;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.awaitility.Awaitility;

/**
 * How many threads of this JVM wait inside a backend's {@link LockBackend#acquire}: parked (waiting,
 * timed waiting or blocked) with an {@code acquire} frame of a {@code LockBackend} class on their stack.
 *
 * <p>The kit uses it where a test must know that a contender has reached the backend and is waiting
 * there, before it cancels the contender or starts the next one, instead of sleeping and hoping. It
 * sees only the calling side: a contender parked while its request is still in flight counts as well,
 * so what follows may still race with that one round trip, never with a contender that has not called
 * the backend at all.
 *
 * <p>Thread-safe.
 */
final class WaitingAcquisitions {

    private static final Map<String, Boolean> BACKEND_CLASSES = new ConcurrentHashMap<>();

    private WaitingAcquisitions() {
    }

    /** Threads parked inside {@code LockBackend.acquire} now. */
    static long count() {
        return Thread.getAllStackTraces().entrySet().stream()
                .filter(e -> e.getKey().getState() != Thread.State.RUNNABLE && e.getKey().getState() != Thread.State.NEW)
                .filter(e -> insideAcquire(e.getValue()))
                .count();
    }

    /** Waits until at least {@code n} threads are parked inside {@code LockBackend.acquire}, at most {@code atMost}. */
    static void awaitAtLeast(long n, Duration atMost, String what) {
        Awaitility.await(what + " to wait inside LockBackend.acquire").atMost(atMost)
                .pollInterval(Duration.ofMillis(5)).until(() -> count() >= n);
    }

    private static boolean insideAcquire(StackTraceElement[] stack) {
        for (StackTraceElement frame : stack) {
            if (frame.getMethodName().equals("acquire") && isBackend(frame.getClassName())) {
                return true;
            }
        }
        return false;
    }

    private static boolean isBackend(String className) {
        return BACKEND_CLASSES.computeIfAbsent(className, n -> {
            try {
                return LockBackend.class.isAssignableFrom(Class.forName(n, false, Thread.currentThread().getContextClassLoader()));
            } catch (ClassNotFoundException | LinkageError e) {
                return false;
            }
        });
    }
}
