package io.latchkey.internal;

import io.latchkey.LockLostException;
import io.latchkey.spi.LeaseEvidence;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The validity of one grant, on this process's monotonic clock.
 *
 * <p>The deadline is the latest {@code sentAt + serverTtl - safetyMargin} a backend has confirmed.
 * Readers compare it with {@link System#nanoTime()} directly, so a lease turns invalid on time even if
 * the timer thread was paused with the rest of the process; the client's {@link DeadlineWatch} only
 * makes {@link #lostStage()} complete without anyone asking. Once lost, a lease never becomes valid
 * again: a late confirmation after the deadline says nothing about the time in between, when someone
 * else may have held the lock.
 */
final class Validity implements LeaseEvidence {

    private static final Logger log = LoggerFactory.getLogger(Validity.class);

    private final String lockName;
    /** What the messages call it: {@code lock 'x'}, or {@code semaphore 'x' permit 2}. */
    private volatile String subject;
    private final Supplier<String> where;
    private final long marginNanos;
    private final DeadlineWatch watch;
    private final CompletableFuture<LockLostException> lostFuture = new CompletableFuture<>();
    private final long createdAt = System.nanoTime();

    private volatile long validUntil;
    private volatile boolean confirmed;
    private volatile boolean closed;
    private volatile LockLostException lost;
    private volatile boolean limited;
    private volatile long limitAt;
    private volatile String limitReason;
    private long lastConfirmedAt; // guarded by this
    private boolean started; // guarded by this
    private Consumer<LockLostException> onLost; // guarded by this

    /**
     * @param subject what the messages call it
     * @param where where the grant is kept, for messages: asked only when one is written
     * @param safetyMargin taken off every deadline a backend confirms
     * @param watch the client's watch, which ends the grant at its deadline once {@linkplain #start started}
     */
    Validity(String lockName, String subject, Supplier<String> where, Duration safetyMargin, DeadlineWatch watch) {
        this.lockName = lockName;
        this.subject = subject;
        this.where = where;
        this.marginNanos = safetyMargin.toNanos();
        this.watch = watch;
    }

    /** Names the lease more precisely once the grant is known, such as the permit slot it holds. */
    void rename(String subject) {
        this.subject = subject;
    }

    @Override
    public synchronized void confirmed(long sentAtNanos, Duration serverTtl) {
        if (closed || lost != null) {
            return;
        }
        long until = sentAtNanos + serverTtl.toNanos() - marginNanos;
        if (confirmed && until - validUntil <= 0) {
            return;
        }
        if (confirmed && System.nanoTime() - validUntil >= 0) {
            return; // too late: the deadline already passed, and with it the lease
        }
        validUntil = until;
        lastConfirmedAt = System.nanoTime();
        confirmed = true;
        // a later deadline needs nothing from the watch: it finds it when it runs at the earlier one
    }

    @Override
    public void lost(String reason, Throwable cause) {
        markLost(reason, cause, LockLostException.Reason.BACKEND);
    }

    /**
     * Ends the lease at {@code atNanos} whatever the backend confirms: the {@code atMost} bound of a
     * request. Called before {@link #start}.
     */
    synchronized void limit(long atNanos, String reason) {
        limitAt = atNanos;
        limitReason = reason;
        limited = true;
    }

    /**
     * Starts watching the deadline once the grant is handed out.
     *
     * @return false if the backend never confirmed the grant, or it is already lost or expired
     */
    synchronized boolean start(Consumer<LockLostException> onLost) {
        if (!confirmed || lost != null || System.nanoTime() - validUntil >= 0 || limitPassed()) {
            return false;
        }
        this.onLost = onLost;
        started = true;
        watch.watch(this, deadlineNanos());
        return true;
    }

    boolean isValid() {
        LockLostException l = lost;
        if (l != null) {
            // Whoever sees the loss first may be ahead of markLost's completion: lost() must never lag isValid().
            lostFuture.complete(l);
            return false;
        }
        if (closed || !confirmed) {
            return false;
        }
        if (limitPassed()) {
            markLost(limitReason, null, LockLostException.Reason.AT_MOST);
            return false;
        }
        if (System.nanoTime() - validUntil >= 0) {
            expire();
            return false;
        }
        return true;
    }

    private boolean limitPassed() {
        return limited && System.nanoTime() - limitAt >= 0;
    }

    /** The earlier of the validity deadline and the limit, on {@link System#nanoTime()}. */
    long deadlineNanos() {
        return limited && limitAt - validUntil < 0 ? limitAt : validUntil;
    }

    void ensureValid() {
        if (!isValid()) {
            LockLostException l = lost;
            throw new LockLostException(lockName, l != null ? l.getMessage() : subject + " is not valid", l);
        }
    }

    void ensureValidForNesting() {
        if (!isValid()) {
            LockLostException l = lost;
            throw new LockLostException(lockName, subject + " (" + where.get() + ") is held by this thread"
                    + " through a lease that was lost (" + (l != null ? l.getMessage() : "expired")
                    + "); close that lease before taking the lock again", l);
        }
    }

    Duration remaining() {
        if (!isValid()) {
            return Duration.ZERO;
        }
        return Duration.ofNanos(Math.max(0, deadlineNanos() - System.nanoTime()));
    }

    /** The loss, once the lease was lost (its validity ended or the backend said so); else null. */
    LockLostException loss() {
        isValid(); // an expired deadline turns into a loss here
        return lost;
    }

    CompletionStage<LockLostException> lostStage() {
        return lostFuture.minimalCompletionStage();
    }

    /** The lease was closed normally: no loss is signalled after this. */
    synchronized void close() {
        closed = true;
        watch.unwatch(this);
    }

    String describeState() {
        LockLostException l = lost;
        if (l != null) {
            return l.getMessage();
        }
        if (!confirmed) {
            return "the backend never confirmed the grant";
        }
        return "the deadline passed " + Duration.ofNanos(System.nanoTime() - validUntil) + " ago";
    }

    /**
     * The watch's check: ends the grant if its deadline passed.
     *
     * @return whether the grant is still to be watched: neither closed, lost, nor past its deadline
     */
    boolean checkDeadline() {
        synchronized (this) {
            if (closed || lost != null) {
                return false;
            }
            if (!limitPassed() && System.nanoTime() - validUntil < 0) {
                return true;
            }
        }
        // the loss outside the lock, like expire()
        if (limitPassed()) {
            markLost(limitReason, null, LockLostException.Reason.AT_MOST);
        } else {
            expire();
        }
        return false;
    }

    private void expire() {
        long since;
        synchronized (this) {
            since = System.nanoTime() - (lastConfirmedAt != 0 ? lastConfirmedAt : createdAt);
        }
        markLost("no confirmation from the backend for " + Duration.ofNanos(since).toMillis()
                + " ms, so the validity deadline (lease minus safety margin) passed", null, LockLostException.Reason.EXPIRED);
    }

    private void markLost(String reason, Throwable cause, LockLostException.Reason kind) {
        LockLostException exception;
        Consumer<LockLostException> callback;
        synchronized (this) {
            if (lost != null) {
                lostFuture.complete(lost);
                return;
            }
            if (closed) {
                return;
            }
            exception = new LockLostException(lockName, subject + " (" + where.get() + ") lost: " + reason, cause, kind);
            lost = exception;
            callback = onLost;
        }
        watch.unwatch(this);
        // Complete before logging: whoever watches lost() learns of the loss without waiting for the log.
        lostFuture.complete(exception);
        if (callback != null) {
            callback.accept(exception);
        }
        log.warn("{}", exception.getMessage(), cause);
    }
}
