package io.latchkey.bench;

import java.time.Duration;
import java.util.List;

/** The benchmark's own threads: started as daemons, their failures collected, joined within a bound. */
final class BenchThreads {

    private BenchThreads() {
    }

    /** What a benchmark thread runs. */
    interface Body {
        void run() throws Exception;
    }

    /** Starts a daemon thread named {@code bench-<what>} that runs {@code body}, adding what it throws to {@code failures}. */
    static Thread thread(String what, Body body, List<Throwable> failures) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                synchronized (failures) {
                    failures.add(e);
                }
            }
        }, "bench-" + what);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Waits for {@code threads} within {@code bound} in all; throws if one is still running or one failed. */
    static void join(List<Thread> threads, Duration bound, List<Throwable> failures) throws Exception {
        long deadline = System.nanoTime() + bound.toNanos();
        for (Thread t : threads) {
            t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            if (t.isAlive()) {
                throw new IllegalStateException("a benchmark thread did not finish within " + bound);
            }
        }
        synchronized (failures) {
            if (!failures.isEmpty()) {
                throw new IllegalStateException("a benchmark thread failed: " + failures.get(0), failures.get(0));
            }
        }
    }
}
