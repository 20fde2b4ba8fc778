package io.latchkey.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The deadlines of a client's held grants, watched by one task on the client's timer: the task is
 * scheduled for the earliest deadline it knows of and, when it runs, ends every grant whose deadline
 * passed and schedules itself for the earliest of the others.
 *
 * <p>A grant with its own timer task cost the timer thread a wake-up per grant and a cancel per
 * release, on the caller's path. Here a new grant touches the timer only if its deadline comes before
 * the task's: a grant's deadline is its confirmation's send time plus the lease less the margin, so
 * grants of one client come with ever later deadlines, and a grant taken and released within its
 * lease costs no timer work at all. A confirmation that extends a deadline needs none either: the task, run at the old deadline,
 * finds the new one. So the timer wakes about once per lease for a client that keeps taking locks, and
 * once per confirmation period for one that holds many.
 *
 * <p>Why no deadline is missed: a grant is added to the set before its deadline is compared with the
 * task's, under this object's lock. Either the task then scheduled runs no later than the deadline, or
 * the task that was running had not yet taken the lock to clear its schedule, so its scan of the set
 * begins after the grant was added and sees it.
 *
 * <p>Thread-safe.
 */
final class DeadlineWatch {

    private final ScheduledExecutorService timer;
    private final Set<Validity> watched = ConcurrentHashMap.newKeySet();
    private ScheduledFuture<?> next; // guarded by this
    private long nextAt; // guarded by this: the System.nanoTime() the next task runs at
    private long scheduled; // guarded by this: tasks put on the timer so far

    DeadlineWatch(ScheduledExecutorService timer) {
        this.timer = timer;
    }

    /** Watches {@code validity}, whose deadline is {@code deadlineNanos} ({@link System#nanoTime()}) or later. */
    void watch(Validity validity, long deadlineNanos) {
        watched.add(validity);
        runBy(deadlineNanos);
    }

    /** Stops watching {@code validity}: it was closed or lost. */
    void unwatch(Validity validity) {
        watched.remove(validity);
    }

    /** The grants watched now. */
    int size() {
        return watched.size();
    }

    /** How many tasks this watch has put on the timer so far. */
    synchronized long scheduled() {
        return scheduled;
    }

    private synchronized void runBy(long deadlineNanos) {
        if (next != null && deadlineNanos - nextAt >= 0) {
            return;
        }
        if (next != null) {
            next.cancel(false);
        }
        try {
            next = timer.schedule(this::run, Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
            nextAt = deadlineNanos;
            scheduled++;
        } catch (RejectedExecutionException e) {
            next = null; // the client is closing and ends its grants itself
        }
    }

    private void run() {
        synchronized (this) {
            next = null;
        }
        long earliest = 0;
        boolean pending = false;
        for (Validity validity : watched) {
            if (!validity.checkDeadline()) {
                watched.remove(validity);
                continue;
            }
            long deadline = validity.deadlineNanos();
            if (!pending || deadline - earliest < 0) {
                earliest = deadline;
                pending = true;
            }
        }
        if (pending) {
            runBy(earliest);
        }
    }
}
