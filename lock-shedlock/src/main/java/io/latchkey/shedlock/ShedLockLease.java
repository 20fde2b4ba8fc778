package io.latchkey.shedlock;

import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockLostException;
import io.latchkey.spi.Durations;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Latchkey grant taken for ShedLock, as the task sees it: the Latchkey lease, with ShedLock's
 * {@code lockAtMostFor} as a second deadline that this class keeps (and an extension moves), and the
 * {@code lockAtLeastFor} of an extension kept here when it reaches past what Latchkey keeps.
 *
 * <p>Every {@link LatchkeyLockProvider} {@code SimpleLock} of one grant, the first and each extension,
 * shares one instance, so a task that read it before an extension sees the extended deadline.
 * Thread-safe: state changes are synchronized on the instance; reads are volatile.
 */
final class ShedLockLease implements Lease {

    private static final Logger log = LoggerFactory.getLogger(LatchkeyLockProvider.class);

    /** Where a grant is: held, ended by {@code lockAtMostFor} or a loss, or unlocked by ShedLock. */
    enum State { HELD, EXPIRED, RELEASED }

    private final String name;
    private final Lease lease;
    private final ScheduledExecutorService timer;
    private final ConcurrentMap<String, ShedLockLease> held;
    /** Until when Latchkey keeps the lock after the close (the first atLeast), never later than it does. */
    private final long keptByLatchkeyUntil;
    private final CompletableFuture<LockLostException> lost = new CompletableFuture<>();
    private volatile State state = State.HELD;
    private volatile boolean lingering;
    private volatile long atMostAt;
    private volatile Duration atMost;
    private long atLeastAt; // guarded by this
    private ScheduledFuture<?> pending; // guarded by this

    /**
     * @param requestedAt {@link System#nanoTime()} before the request was sent: both bounds count from it
     * @param held the provider's grants by name, which this one leaves once it ended
     */
    ShedLockLease(String name, Lease lease, long requestedAt, Duration atMost, Duration atLeast,
            ScheduledExecutorService timer, ConcurrentMap<String, ShedLockLease> held) {
        this.name = name;
        this.lease = lease;
        this.timer = timer;
        this.held = held;
        this.keptByLatchkeyUntil = requestedAt + nanos(atLeast);
        this.atLeastAt = keptByLatchkeyUntil;
        this.atMost = atMost;
        this.atMostAt = requestedAt + nanos(atMost);
    }

    /** Arms the {@code lockAtMostFor} deadline and forwards Latchkey's loss signal. */
    synchronized void start() {
        lease.lost().whenComplete((loss, failure) -> {
            if (loss != null && state == State.HELD) {
                lost.complete(loss);
            }
        });
        arm();
    }

    State state() {
        return state;
    }

    @Override
    public String lockName() {
        return name;
    }

    @Override
    public long fencingToken() {
        return lease.fencingToken();
    }

    @Override
    public boolean isValid() {
        return state == State.HELD && System.nanoTime() - atMostAt < 0 && lease.isValid();
    }

    @Override
    public void ensureValid() {
        if (state == State.RELEASED) {
            throw new IllegalStateException("the lease of lock '" + name + "' was released: ShedLock unlocked it"
                    + " when its task returned; a task reads its lease while it runs");
        }
        LockLostException loss = lost.getNow(null);
        if (loss != null) {
            throw new LockLostException(name, loss.getMessage(), loss);
        }
        if (System.nanoTime() - atMostAt >= 0) {
            throw atMostPassed();
        }
        lease.ensureValid();
    }

    @Override
    public Duration remaining() {
        if (!isValid()) {
            return Duration.ZERO;
        }
        Duration left = Duration.ofNanos(Math.max(0, atMostAt - System.nanoTime()));
        Duration latchkey = lease.remaining();
        return left.compareTo(latchkey) < 0 ? left : latchkey;
    }

    @Override
    public CompletionStage<LockLostException> lost() {
        return lost.minimalCompletionStage();
    }

    /** Refused: ShedLock unlocks after the task; a task that closed its lease would unlock under it. */
    @Override
    public void close() {
        throw new UnsupportedOperationException("the lease of lock '" + name + "' belongs to ShedLock, which"
                + " releases it when the task returns: return from the task instead of closing the lease");
    }

    /**
     * Ends the grant if it can no longer be held ({@code lockAtMostFor} passed, or Latchkey lost it), so
     * that the name can be taken again.
     *
     * @return false if the grant still holds the lock: valid, or unlocked and kept for its lockAtLeastFor
     */
    synchronized boolean endIfOver() {
        if (state == State.HELD) {
            if (isValid()) {
                return false;
            }
            expire();
            return true;
        }
        return !lingering;
    }

    /**
     * ShedLock's extend: moves both bounds to count from now if the grant is still valid.
     *
     * @return false, the grant ended, if it was no longer valid
     */
    synchronized boolean extend(Duration newAtMost, Duration newAtLeast) {
        if (state != State.HELD) {
            return false;
        }
        if (!isValid()) {
            expire();
            return false;
        }
        long now = System.nanoTime();
        atMost = newAtMost;
        atMostAt = now + nanos(newAtMost);
        atLeastAt = now + nanos(newAtLeast);
        arm();
        log.debug("lock '{}' extended: held at most {} and at least {} from now, token {}", name,
                Durations.format(newAtMost), Durations.format(newAtLeast), lease.fencingToken());
        return true;
    }

    /**
     * ShedLock's unlock: closes the Latchkey lease, which keeps the first {@code lockAtLeastFor} itself
     * (in the backend's expiry where it can); an extension's later one is kept here until it passes.
     */
    synchronized void unlock() {
        if (state != State.HELD) {
            return; // ended by lockAtMostFor or a loss: nothing left to release
        }
        state = State.RELEASED;
        cancelPending();
        long now = System.nanoTime();
        if (atLeastAt - keptByLatchkeyUntil > 0 && atLeastAt - now > 0) {
            lingering = true;
            pending = timer.schedule(this::endLinger, atLeastAt - now, TimeUnit.NANOSECONDS);
            log.debug("lock '{}' unlocked, kept for the lockAtLeastFor of its extension", name);
            return;
        }
        try {
            lease.close();
        } finally {
            held.remove(name, this);
        }
    }

    private synchronized void endLinger() {
        lingering = false;
        closeQuietly("at the end of its lockAtLeastFor");
        held.remove(name, this);
    }

    private void arm() {
        cancelPending();
        pending = timer.schedule(this::atMostReached, Math.max(0, atMostAt - System.nanoTime()),
                TimeUnit.NANOSECONDS);
    }

    private synchronized void atMostReached() {
        if (state == State.HELD && System.nanoTime() - atMostAt >= 0) {
            expire();
        }
    }

    /** Called holding the monitor: tells the task first, then releases the lock for the next node. */
    private void expire() {
        state = State.EXPIRED;
        cancelPending();
        boolean byAtMost = !lost.isDone() && System.nanoTime() - atMostAt >= 0;
        LockLostException reason = byAtMost ? atMostPassed() : new LockLostException(name, "lock '" + name
                + "' was lost: its Latchkey lease is no longer valid", null, LockLostException.Reason.EXPIRED);
        if (lost.complete(reason) && byAtMost) {
            log.warn("{}", reason.getMessage());
        }
        closeQuietly(byAtMost ? "after its lockAtMostFor" : "after its loss");
        held.remove(name, this);
    }

    private LockLostException atMostPassed() {
        return new LockLostException(name, "lock '" + name + "' was held for its lockAtMostFor of "
                + Durations.format(atMost) + " and released: another node may run the task now; raise lockAtMostFor"
                + " above the task's longest run, or extend it with LockExtender", null,
                LockLostException.Reason.AT_MOST);
    }

    private void closeQuietly(String when) {
        try {
            lease.close();
        } catch (LockBackendUnavailableException e) {
            log.warn("lock '{}': its release {} did not reach the backend, where it expires on its own: {}", name,
                    when, e.getMessage());
        }
    }

    private void cancelPending() {
        if (pending != null) {
            pending.cancel(false);
            pending = null;
        }
    }

    @Override
    public String toString() {
        return "ShedLockLease{lock '" + name + "', token " + lease.fencingToken() + ", " + state
                + (lingering ? " for its lockAtLeastFor" : "") + '}';
    }

    /** Nanoseconds of {@code d}, capped at a century so that a deadline never overflows. */
    private static long nanos(Duration d) {
        Duration century = Duration.ofDays(36_525);
        return d.compareTo(century) > 0 ? century.toNanos() : Math.max(0, d.toNanos());
    }
}
