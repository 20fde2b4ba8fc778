package io.latchkey.internal;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockListener;
import io.latchkey.LockListener.Target;
import io.latchkey.LockLostException;
import io.latchkey.Revocation;
import io.latchkey.spi.DaemonThreads;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The events of one client's locks, permits and elections: its listeners and the one event thread
 * that delivers to them in order, started only once a listener is registered and an event occurs. At
 * most {@code capacity} events wait; further ones are dropped and logged, so a stuck listener never
 * blocks a lock or a candidacy. A listener that throws is logged and affects neither.
 *
 * <p>Thread-safe.
 */
final class LockEvents {

    private static final Logger log = LoggerFactory.getLogger(SharedLockClient.class);

    private final String backendName;
    private final Function<Target, String> where;
    private final ThreadPoolExecutor events;
    private final List<LockListener> listeners;
    private final AtomicLong droppedEvents = new AtomicLong();

    /** @param where describes where a target lives in the backend, for messages */
    LockEvents(String backendName, Function<Target, String> where, String threadPrefix, int capacity, List<LockListener> initial) {
        this.backendName = backendName;
        this.where = where;
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

    /** Queues one event of {@code target} for every listener; never blocks and never throws. */
    void emit(Target target, Consumer<LockListener> event) {
        queue(target, event, (listener, e) -> log.warn("lock listener {} failed on an event of {} ({}); the {} is not affected",
                listener, target, where.apply(target), noun(target), e));
    }

    /**
     * Queues {@code event} for every listener, {@code failed} logging a listener that throws;
     * {@code about} names the event's subject when events are dropped. Never blocks and never throws.
     */
    private void queue(Object about, Consumer<LockListener> event, BiConsumer<LockListener, RuntimeException> failed) {
        if (listeners.isEmpty()) {
            return;
        }
        try {
            events.execute(() -> {
                for (LockListener listener : listeners) {
                    try {
                        event.accept(listener);
                    } catch (RuntimeException e) {
                        failed.accept(listener, e);
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            long dropped = droppedEvents.incrementAndGet();
            if (!events.isShutdown() && (dropped == 1 || dropped % 1000 == 0)) {
                log.warn("lock listeners of {} fall behind: {} events dropped so far, the latest for {};"
                        + " make listeners return quickly", backendName, dropped, about);
            }
        }
    }

    void acquired(Target target, Duration waitTime, long token) {
        emit(target, l -> l.acquired(target, waitTime, token));
    }

    void acquireFailed(Target target, long callStart, LockException e) {
        Duration waited = Duration.ofNanos(System.nanoTime() - callStart);
        emit(target, l -> l.acquireFailed(target, waited, e));
        if (e instanceof LockBackendUnavailableException unavailable) {
            backendUnavailable(target, unavailable);
        }
    }

    void notAcquired(Target target, long callStart) {
        Duration waited = Duration.ofNanos(System.nanoTime() - callStart);
        emit(target, l -> l.notAcquired(target, waited));
    }

    void released(Target target, Duration holdTime) {
        emit(target, l -> l.released(target, holdTime));
    }

    void lost(Target target, LockLostException reason) {
        emit(target, l -> l.lost(target, reason));
    }

    void backendUnavailable(Target target, LockBackendUnavailableException e) {
        emit(target, l -> l.backendUnavailable(target, e));
    }

    void elected(String election, long term) {
        emitElection(election, term, l -> l.elected(election, term));
    }

    void revoked(String election, long term, Revocation why, Duration led) {
        emitElection(election, term, l -> l.revoked(election, term, why, led));
    }

    private void emitElection(String election, long term, Consumer<LockListener> event) {
        queue(new ElectionTerm(election, term), event, (listener, e) -> log.warn(
                "lock listener {} failed on an event of term {} of election '{}'; the candidacy is not affected",
                listener, term, election, e));
    }

    /** A term of an election, as a message about dropped events names it. */
    private record ElectionTerm(String election, long term) {
        @Override
        public String toString() {
            return "term " + term + " of election '" + election + "'";
        }
    }

    private static String noun(Target target) {
        return switch (target.kind()) {
            case LOCK -> "lock";
            case PERMIT -> "semaphore";
            case READ, WRITE -> "read-write lock";
        };
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
