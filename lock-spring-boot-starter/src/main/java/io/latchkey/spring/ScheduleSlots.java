package io.latchkey.spring;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Set;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.Schedules;
import org.springframework.scheduling.support.CronExpression;
import org.springframework.util.StringValueResolver;

/**
 * The schedule slots of a {@code @Scheduled} method: the name of each run that is the same on every
 * instance, whatever its clock says.
 *
 * <ul>
 *   <li>{@code cron}: the run's scheduled fire time, as the scheduler computed it from the cron
 *       expression ({@link SlotCapturingScheduler} captures it). Called outside the scheduler, the
 *       latest fire time at or before now.</li>
 *   <li>{@code fixedRate}: the run's scheduled time (start + n periods, start being the initial delay
 *       after registration) rounded down to a multiple of the period since the epoch. Every instance's
 *       runs are exactly one period apart, so each instance meets each grid slot once, whatever its
 *       phase; the backend lets one of them run it. Called outside the scheduler: now, rounded down.</li>
 * </ul>
 * A fixed delay has no slots: runs of different instances drift apart with the run times.
 *
 * <p>Immutable and thread-safe.
 */
abstract class ScheduleSlots {

    /** How far back the last fire time of a cron expression is looked for: beyond any real calendar rule. */
    private static final Duration CRON_LOOKBACK = Duration.ofDays(366L * 8);

    /** The slot of the run whose scheduled time is {@code scheduled} (null if not known), at {@code now}. */
    abstract Instant slot(Instant scheduled, Instant now);

    /**
     * The slots of {@code method}'s schedule.
     *
     * @throws IllegalArgumentException naming what is missing if the method has no single cron or
     *     fixed-rate schedule
     */
    static ScheduleSlots of(Method method, StringValueResolver resolver) {
        Set<Scheduled> all = AnnotatedElementUtils.getMergedRepeatableAnnotations(method, Scheduled.class, Schedules.class);
        List<Scheduled> timed = all.stream().filter(s -> !s.cron().isEmpty() || s.fixedRate() >= 0 || !s.fixedRateString().isEmpty())
                .toList();
        if (timed.size() != 1) {
            throw new IllegalArgumentException("oncePerSlot needs exactly one @Scheduled(cron = ...) or"
                    + " @Scheduled(fixedRate = ...) on the method to derive its slots from, found " + timed.size()
                    + (all.size() > timed.size() ? " (a fixed delay has no slots)" : ""));
        }
        Scheduled s = timed.get(0);
        if (!s.cron().isEmpty()) {
            String cron = resolver.resolveStringValue(s.cron());
            String zone = s.zone().isEmpty() ? null : resolver.resolveStringValue(s.zone());
            return new Cron(CronExpression.parse(cron), zone == null ? ZoneId.systemDefault() : ZoneId.of(zone));
        }
        Duration period = s.fixedRate() >= 0
                ? Duration.of(s.fixedRate(), s.timeUnit().toChronoUnit())
                : DurationStyle.detectAndParse(resolver.resolveStringValue(s.fixedRateString()), s.timeUnit().toChronoUnit());
        if (period.isZero() || period.isNegative()) {
            throw new IllegalArgumentException("oncePerSlot needs a positive fixed rate, not " + period);
        }
        return new FixedRate(period);
    }

    static final class Cron extends ScheduleSlots {

        private final CronExpression expression;
        private final ZoneId zone;

        Cron(CronExpression expression, ZoneId zone) {
            this.expression = expression;
            this.zone = zone;
        }

        @Override
        Instant slot(Instant scheduled, Instant now) {
            return scheduled != null ? scheduled : latestFireAtOrBefore(now);
        }

        /** CronExpression only looks forward: look back in doubling windows until one holds a fire time. */
        Instant latestFireAtOrBefore(Instant now) {
            ZonedDateTime end = now.atZone(zone);
            for (Duration back = Duration.ofSeconds(1); back.compareTo(CRON_LOOKBACK) <= 0; back = back.multipliedBy(2)) {
                ZonedDateTime fire = expression.next(end.minus(back));
                if (fire != null && !fire.isAfter(end)) {
                    for (ZonedDateTime n = expression.next(fire); n != null && !n.isAfter(end); n = expression.next(n)) {
                        fire = n;
                    }
                    return fire.toInstant();
                }
            }
            throw new IllegalStateException("cron expression '" + expression + "' has no fire time in the "
                    + CRON_LOOKBACK.toDays() + " days before " + now + ", so it names no slot");
        }

        @Override
        public String toString() {
            return "cron '" + expression + "' in " + zone;
        }
    }

    static final class FixedRate extends ScheduleSlots {

        private final long periodNanos;

        FixedRate(Duration period) {
            this.periodNanos = period.toNanos();
        }

        @Override
        Instant slot(Instant scheduled, Instant now) {
            Instant t = scheduled != null ? scheduled : now;
            // Nanoseconds since the epoch overflow in 2262; a slot is far coarser, so work in two parts.
            long seconds = t.getEpochSecond();
            long periodSeconds = periodNanos / 1_000_000_000L;
            if (periodNanos % 1_000_000_000L == 0) {
                return Instant.ofEpochSecond(Math.floorDiv(seconds, periodSeconds) * periodSeconds);
            }
            long nanos = Math.addExact(Math.multiplyExact(seconds, 1_000_000_000L), t.getNano());
            return Instant.EPOCH.plus(Math.floorDiv(nanos, periodNanos) * periodNanos, ChronoUnit.NANOS);
        }

        @Override
        public String toString() {
            return "fixed rate " + Duration.ofNanos(periodNanos);
        }
    }
}
