package io.latchkey.internal;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockListener;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.LockBackend;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lock events of one client: its listeners and the one event thread that delivers to them in
 * order, started only once a listener is registered and an event occurs. At most
 * {@code capacity} events wait; further ones are dropped and logged, so a stuck listener never blocks
 * a lock. A listener that throws is logged and does not affect the lock.
 *
 * <p>Thread-safe.
 */
final class LockEvents {

    private static final Logger log = LoggerFactory.getLogger(SharedLockClient.class);

    private final String backendName;
    private final LockBackend backend;
    private final ThreadPoolExecutor events;
    private final List<LockListener> listeners;
    private final AtomicLong droppedEvents = new AtomicLong();

    LockEvents(String backendName, LockBackend backend, String threadPrefix, int capacity, List<LockListener> initial) {
        this.backendName = backendName;
        this.backend = backend;
        this.events = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(capacity),
                DaemonThreads.factory(threadPrefix));
        this.events.allowCoreThreadTimeOut(true);
        this.listeners = new CopyOnWriteArrayList<>(initial);
    }

    void add(LockListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    void remove(LockListener listener) {
        listeners.remove(listener);
    }

    /** Queues one event for every listener; never blocks and never throws. */
    void emit(String lockName, Consumer<LockListener> event) {
        if (listeners.isEmpty()) {
            return;
        }
        try {
            events.execute(() -> {
                for (LockListener listener : listeners) {
                    try {
                        event.accept(listener);
                    } catch (RuntimeException e) {
                        log.warn("lock listener {} failed on an event of lock '{}' ({}); the lock is not affected",
                                listener, lockName, backend.describe(lockName), e);
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            long dropped = droppedEvents.incrementAndGet();
            if (!events.isShutdown() && (dropped == 1 || dropped % 1000 == 0)) {
                log.warn("lock listeners of {} fall behind: {} events dropped so far, the latest for lock '{}';"
                        + " make listeners return quickly", backendName, dropped, lockName);
            }
        }
    }

    void acquireFailed(String name, long callStart, LockException e) {
        Duration waited = Duration.ofNanos(System.nanoTime() - callStart);
        emit(name, l -> l.acquireFailed(name, waited, e));
        if (e instanceof LockBackendUnavailableException) {
            emit(name, l -> l.backendUnavailable(name, (LockBackendUnavailableException) e));
        }
    }

    void notAcquired(String name, long callStart) {
        Duration waited = Duration.ofNanos(System.nanoTime() - callStart);
        emit(name, l -> l.notAcquired(name, waited));
    }

    /** Accepts no more events; those queued (the close's own among them) are still delivered. */
    void shutdown() {
        events.shutdown();
    }

    /** Waits up to {@code nanos} for queued events, then drops the rest. */
    void awaitTermination(long nanos) throws InterruptedException {
        if (!events.awaitTermination(nanos, TimeUnit.NANOSECONDS)) {
            events.shutdownNow();
        }
    }

    void shutdownNow() {
        events.shutdownNow();
    }
}
