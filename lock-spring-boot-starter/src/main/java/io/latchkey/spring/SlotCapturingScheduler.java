package io.latchkey.spring;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.springframework.scheduling.SchedulingAwareRunnable;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.Trigger;
import org.springframework.scheduling.TriggerContext;

/**
 * A {@link TaskScheduler} in front of the one {@code @Scheduled} methods run on, which tells the code a
 * task runs when that run was scheduled for, so that once-per-slot locking names the slot by the
 * schedule and not by the clock at the moment the thread got round to it.
 *
 * <p>For a trigger (cron), the scheduled time is the instant the trigger last returned: Spring's
 * rescheduling runnable asks the trigger for the next time only after a run completes, so during a
 * run it is that run's own time. For a fixed rate it is start + n periods for the n-th run, the
 * executor's own arithmetic. Tasks keep their qualifier, so {@code @Scheduled(scheduler = ...)} still
 * routes. Thread-safe.
 */
final class SlotCapturingScheduler implements TaskScheduler {

    private static final ThreadLocal<Instant> SCHEDULED = new ThreadLocal<>();

    private final TaskScheduler delegate;

    SlotCapturingScheduler(TaskScheduler delegate) {
        this.delegate = delegate;
    }

    /** The scheduled time of the task the calling thread runs, or null if it runs no scheduled task. */
    static Instant currentScheduledTime() {
        return SCHEDULED.get();
    }

    @Override
    public Clock getClock() {
        return delegate.getClock();
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable task, Trigger trigger) {
        CapturingTrigger capturing = new CapturingTrigger(trigger);
        return delegate.schedule(new Run(task, capturing::last), capturing);
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable task, Instant startTime) {
        return delegate.schedule(new Run(task, () -> startTime), startTime);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Instant startTime, Duration period) {
        return delegate.scheduleAtFixedRate(fixedRate(task, startTime, period), startTime, period);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Duration period) {
        // The executor starts such a task at once, so now is its start.
        return delegate.scheduleAtFixedRate(fixedRate(task, getClock().instant(), period), period);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Instant startTime, Duration delay) {
        return delegate.scheduleWithFixedDelay(task, startTime, delay);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Duration delay) {
        return delegate.scheduleWithFixedDelay(task, delay);
    }

    private static Run fixedRate(Runnable task, Instant start, Duration period) {
        AtomicLong runs = new AtomicLong();
        return new Run(task, () -> start.plus(period.multipliedBy(runs.getAndIncrement())));
    }

    @Override
    public String toString() {
        return "SlotCapturingScheduler{" + delegate + '}';
    }

    /** The trigger of a task, remembering the last instant it returned. */
    private static final class CapturingTrigger implements Trigger {

        private final Trigger trigger;
        private volatile Instant last;

        CapturingTrigger(Trigger trigger) {
            this.trigger = trigger;
        }

        @Override
        public Instant nextExecution(TriggerContext context) {
            Instant next = trigger.nextExecution(context);
            last = next;
            return next;
        }

        Instant last() {
            return last;
        }
    }

    /** A task that publishes its scheduled time to the code it runs. */
    private static final class Run implements SchedulingAwareRunnable {

        private final Runnable task;
        private final Supplier<Instant> scheduledTime;

        Run(Runnable task, Supplier<Instant> scheduledTime) {
            this.task = task;
            this.scheduledTime = scheduledTime;
        }

        @Override
        public void run() {
            Instant outer = SCHEDULED.get();
            SCHEDULED.set(scheduledTime.get());
            try {
                task.run();
            } finally {
                if (outer == null) {
                    SCHEDULED.remove();
                } else {
                    SCHEDULED.set(outer);
                }
            }
        }

        @Override
        public boolean isLongLived() {
            return task instanceof SchedulingAwareRunnable s ? s.isLongLived() : SchedulingAwareRunnable.super.isLongLived();
        }

        @Override
        public String getQualifier() {
            return task instanceof SchedulingAwareRunnable s ? s.getQualifier() : null;
        }

        @Override
        public String toString() {
            return task.toString();
        }
    }
}
