package io.latchkey.internal;

import io.latchkey.LockLostException;
import io.latchkey.spi.LeaseEvidence;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The validity of one grant, on this process's monotonic clock.
 *
 * <p>The deadline is the latest {@code sentAt + serverTtl - safetyMargin} a backend has confirmed.
 * Readers compare it with {@link System#nanoTime()} directly, so a lease turns invalid on time even if
 * the timer thread was paused with the rest of the process; the timer only makes {@link #lostStage()}
 * complete without anyone asking. Once lost, a lease never becomes valid again: a late confirmation
 * after the deadline says nothing about the time in between, when someone else may have held the lock.
 */
final class Validity implements LeaseEvidence {

    private static final Logger log = LoggerFactory.getLogger(Validity.class);

    private final String lockName;
    /** What the messages call it: {@code lock 'x'}, or {@code semaphore 'x' permit 2}. */
    private volatile String subject;
    private final String where;
    private final long marginNanos;
    private final ScheduledExecutorService timer;
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
    private ScheduledFuture<?> check; // guarded by this
    private Consumer<LockLostException> onLost; // guarded by this

    Validity(String lockName, String where, Duration safetyMargin, ScheduledExecutorService timer) {
        this(lockName, "lock '" + lockName + "'", where, safetyMargin, timer);
    }

    Validity(String lockName, String subject, String where, Duration safetyMargin, ScheduledExecutorService timer) {
        this.lockName = lockName;
        this.subject = subject;
        this.where = where;
        this.marginNanos = safetyMargin.toNanos();
        this.timer = timer;
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
        if (started) {
            scheduleCheck();
        }
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
        scheduleCheck();
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

    /** The earlier of the validity deadline and the limit. */
    private long effectiveDeadline() {
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
            throw new LockLostException(lockName, subject + " (" + where + ") is held by this thread"
                    + " through a lease that was lost (" + (l != null ? l.getMessage() : "expired")
                    + "); close that lease before taking the lock again", l);
        }
    }

    Duration remaining() {
        if (!isValid()) {
            return Duration.ZERO;
        }
        return Duration.ofNanos(Math.max(0, effectiveDeadline() - System.nanoTime()));
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
        if (check != null) {
            check.cancel(false);
        }
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

    private void scheduleCheck() {
        if (check != null) {
            check.cancel(false);
        }
        try {
            check = timer.schedule(this::checkDeadline, Math.max(0, effectiveDeadline() - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            check = null; // the client is closing and will end this grant
        }
    }

    private void checkDeadline() {
        synchronized (this) {
            if (closed || lost != null) {
                return;
            }
            if (limitPassed()) {
                // fall through to the loss, outside the lock like expire()
            } else if (System.nanoTime() - validUntil < 0) {
                scheduleCheck();
                return;
            }
        }
        if (limitPassed()) {
            markLost(limitReason, null, LockLostException.Reason.AT_MOST);
        } else {
            expire();
        }
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
            exception = new LockLostException(lockName, subject + " (" + where + ") lost: " + reason, cause, kind);
            lost = exception;
            callback = onLost;
            if (check != null) {
                check.cancel(false);
            }
        }
        // Complete before logging: whoever watches lost() learns of the loss without waiting for the log.
        lostFuture.complete(exception);
        if (callback != null) {
            callback.accept(exception);
        }
        log.warn("{}", exception.getMessage(), cause);
    }
}
