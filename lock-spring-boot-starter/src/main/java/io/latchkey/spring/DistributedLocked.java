package io.latchkey.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method under a distributed lock of the application's {@link io.latchkey.LockClient},
 * on any Spring bean, through a Spring AOP proxy.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 0 * * *")
 * @DistributedLocked(name = "report:nightly", lockAtMostFor = "30m", lockAtLeastFor = "1m", oncePerSlot = true)
 * void nightly() { ... }
 *
 * @DistributedLocked(name = "report:user:#{#userId}", waitFor = "5s", onNotAcquired = NotAcquired.THROW)
 * void rebuild(long userId) { ... }
 *
 * @DistributedLocked(name = "table:dim", mode = Mode.READ, waitFor = "5m")
 * Report reportFromDim() { ... }
 *
 * @DistributedLocked(name = "table:dim", mode = Mode.WRITE, waitFor = "30m")
 * void rebuildDim() { ... }
 * }</pre>
 *
 * <p>The attribute names {@code name}, {@code lockAtMostFor} and {@code lockAtLeastFor} are those of
 * ShedLock's {@code @SchedulerLock}, with the same meaning, so a job moves over by changing the
 * annotation's type. Durations are written {@code 500ms}, {@code 5s}, {@code 2m}, ISO-8601
 * ({@code PT5S}) or as milliseconds ({@code 5000}); every attribute may be a {@code ${property}}
 * placeholder.
 *
 * <p>When the method is called inside a transaction (a transaction synchronization is active on the
 * calling thread), the lock is released after that transaction completes, committed or rolled back,
 * and never before: the next holder reads what this one committed. A lease lost before the commit
 * makes the commit fail (it rolls back) with the {@link io.latchkey.LockLostException}.
 *
 * <p>Start-up fails, naming the method, if the proxy cannot reach an annotated method (private,
 * final or static), if the name does not parse, if a duration does not parse, or if
 * {@link #oncePerSlot()} is set on a method without {@code @Scheduled(cron = ...)} or
 * {@code @Scheduled(fixedRate = ...)}, or {@link #mode()} {@code READ} or {@code WRITE} is combined
 * with {@link #oncePerSlot()} (schedule slots are recorded with a lock).
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DistributedLocked {

    /**
     * The lock name: plain text with template expressions {@code #{...}} in Spring's expression
     * language over the method's arguments, by name ({@code #userId}, which needs the compiler's
     * {@code -parameters} flag, as Spring Boot's build plugins set it) or by position ({@code #p0}),
     * and beans ({@code @bean}).
     */
    String name();

    /**
     * How long to wait for another holder to release the lock; zero (the default) means try once.
     */
    String waitFor() default "";

    /**
     * The longest the lock is held, even if the method runs on (ShedLock's {@code lockAtMostFor}): the
     * lease ends and the method's thread is interrupted (see {@link #interruptOnLoss()}). Empty: the
     * lock is renewed for as long as the method runs.
     */
    String lockAtMostFor() default "";

    /**
     * The shortest the lock is held, even if the method returns earlier (ShedLock's
     * {@code lockAtLeastFor}), so that an instance whose schedule fires a little later finds it taken.
     */
    String lockAtLeastFor() default "";

    /**
     * Runs the method at most once per schedule slot across every instance: the slot is derived from
     * the method's {@code @Scheduled} cron expression or fixed rate, and
     * the backend records the last completed one. Needs a backend that records slots ({@code lock-redis}).
     * A cron run's slot is its scheduled fire time; a fixed-rate run's slot is its scheduled time rounded
     * down to a multiple of the period since the epoch, the same grid on every instance.
     */
    boolean oncePerSlot() default false;

    /** With {@link #oncePerSlot()}: whether a run that throws still marks its slot as done. */
    boolean markSlotOnFailure() default false;

    /** Whether the method's thread is interrupted when the lease is lost while it runs. */
    boolean interruptOnLoss() default true;

    /**
     * Which lock the method runs under: the lock {@link #name()} (the default), or the read or the write
     * lock of the read-write lock {@link #name()}, which is apart from the lock of that name (see
     * {@link io.latchkey.DistributedReadWriteLock}). Methods that share a name must agree on the kind:
     * a {@code LOCK} method does not exclude a {@code WRITE} method of the same name. A backend without
     * read-write locks makes a {@code READ} or {@code WRITE} call throw its
     * {@link UnsupportedOperationException}, which says why.
     */
    Mode mode() default Mode.LOCK;

    /** What a call does when the lock stays held by someone else for the whole {@link #waitFor()}. */
    NotAcquired onNotAcquired() default NotAcquired.SKIP;

    /** The lock a method runs under. */
    enum Mode {
        /** The lock of the name: one caller at a time. */
        LOCK,
        /** The read lock of the read-write lock of the name: any number of readers, never beside a writer. */
        READ,
        /** The write lock of the read-write lock of the name: one writer, beside no reader. */
        WRITE
    }

    /** What a call does when it does not get the lock. */
    enum NotAcquired {
        /**
         * The method does not run; the call returns {@code null} (zero or {@code false} for a primitive
         * type) and logs at DEBUG. The lock client's events count it ({@code latchkey.acquire} with
         * {@code outcome=not_acquired} in the metrics).
         */
        SKIP,
        /** The call throws {@link io.latchkey.LockNotAcquiredException}. */
        THROW
    }
}
