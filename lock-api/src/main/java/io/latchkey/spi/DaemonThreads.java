package io.latchkey.spi;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Thread factories for backends: daemon threads named {@code <prefix>-<n>}.
 *
 * <p>Every thread a backend starts should come from here with a prefix starting with
 * {@code latchkey-}, so that an application never waits on the library at exit and the contract's
 * leak check can tell the library's threads from the application's. Thread-safe.
 */
public final class DaemonThreads {

    private DaemonThreads() {
    }

    /** A factory of daemon threads named {@code prefix-1}, {@code prefix-2}, ... */
    public static ThreadFactory factory(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
