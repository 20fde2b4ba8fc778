package io.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.support.CronExpression;

class ScheduleSlotsTest {

    @Test
    void aCronRunIsNamedByItsScheduledFireTimeNotByTheClock() {
        ScheduleSlots slots = new ScheduleSlots.Cron(CronExpression.parse("0 0 0 * * *"), ZoneOffset.UTC);
        Instant fire = Instant.parse("2030-01-02T00:00:00Z");
        // the run started three minutes late on a slow node: still the midnight slot
        assertThat(slots.slot(fire, fire.plus(Duration.ofMinutes(3)))).isEqualTo(fire);
    }

    @Test
    void outsideTheSchedulerACronSlotIsTheLatestFireTimeAtOrBeforeNow() {
        ScheduleSlots.Cron daily = new ScheduleSlots.Cron(CronExpression.parse("0 30 2 * * *"), ZoneOffset.UTC);
        assertThat(daily.slot(null, Instant.parse("2030-01-02T01:00:00Z"))).isEqualTo(Instant.parse("2030-01-01T02:30:00Z"));
        assertThat(daily.slot(null, Instant.parse("2030-01-02T02:30:00Z"))).isEqualTo(Instant.parse("2030-01-02T02:30:00Z"));
        ScheduleSlots.Cron leapDay = new ScheduleSlots.Cron(CronExpression.parse("0 0 0 29 2 *"), ZoneOffset.UTC);
        assertThat(leapDay.slot(null, Instant.parse("2031-06-01T00:00:00Z"))).isEqualTo(Instant.parse("2028-02-29T00:00:00Z"));
    }

    @Test
    void aFixedRateRunIsNamedByThePeriodGridSinceTheEpoch() {
        ScheduleSlots slots = new ScheduleSlots.FixedRate(Duration.ofMillis(200));
        Instant start = Instant.parse("2030-01-01T00:00:00.130Z");   // this instance's phase: 130 ms
        for (int n = 0; n < 5; n++) {
            Instant scheduled = start.plusMillis(200L * n);
            assertThat(slots.slot(scheduled, scheduled.plusMillis(150)))
                    .isEqualTo(Instant.parse("2030-01-01T00:00:00Z").plusMillis(200L * n));
        }
        assertThat(new ScheduleSlots.FixedRate(Duration.ofMinutes(5)).slot(null, Instant.parse("2030-01-01T00:07:59Z")))
                .isEqualTo(Instant.parse("2030-01-01T00:05:00Z"));
    }

    @Test
    void slotsComeFromTheMethodsScheduleAndAFixedDelayHasNone() throws Exception {
        assertThat(ScheduleSlots.of(Jobs.class.getDeclaredMethod("cron"), v -> v)).isInstanceOf(ScheduleSlots.Cron.class);
        assertThat(ScheduleSlots.of(Jobs.class.getDeclaredMethod("rate"), v -> v).slot(null, Instant.parse("2030-01-01T00:00:01.900Z")))
                .isEqualTo(Instant.parse("2030-01-01T00:00:01.500Z"));
        assertThatThrownBy(() -> ScheduleSlots.of(Jobs.class.getDeclaredMethod("delay"), v -> v))
                .hasMessageContaining("a fixed delay has no slots");
        assertThatThrownBy(() -> ScheduleSlots.of(Jobs.class.getDeclaredMethod("none"), v -> v))
                .hasMessageContaining("oncePerSlot needs exactly one @Scheduled");
    }

    static class Jobs {
        @Scheduled(cron = "*/5 * * * * *")
        void cron() {
        }

        @Scheduled(fixedRateString = "500ms")
        void rate() {
        }

        @Scheduled(fixedDelay = 100)
        void delay() {
        }

        void none() {
        }
    }
}
