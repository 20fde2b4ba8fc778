package io.latchkey.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The helpers a backend gets from the SPI: durations as users write them, saturating deadlines. */
class SpiHelpersTest {

    @Test
    @DisplayName("durations print in the largest unit that shows them exactly")
    void format() {
        assertThat(Durations.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThat(Durations.format(Duration.ofSeconds(5))).isEqualTo("5s");
        assertThat(Durations.format(Duration.ofSeconds(90))).isEqualTo("90s");
        assertThat(Durations.format(Duration.ofMinutes(2))).isEqualTo("2m");
        assertThat(Durations.format(Duration.ofHours(25))).isEqualTo("25h");
        assertThat(Durations.format(Duration.ZERO)).isEqualTo("0s");
        assertThat(Durations.format(Duration.ofNanos(250))).isEqualTo("250ns");
        assertThat(Durations.format(Duration.ofSeconds(-3))).isEqualTo("-3s");
        assertThat(Durations.format(Duration.ofDays(365L * 1_000_000))).endsWith("h");
    }

    @Test
    @DisplayName("what format prints, parse reads back")
    void roundTrip() {
        for (String text : new String[] {"500ms", "15s", "2m", "1h", "1500ms"}) {
            assertThat(Durations.format(Durations.parse("lease", text))).isEqualTo(text);
        }
    }

    @Test
    @DisplayName("a deadline of centuries saturates instead of wrapping into the past")
    void saturates() {
        Deadline far = Deadline.after(Duration.ofDays(365L * 1_000_000));
        assertThat(far.hasPassed()).isFalse();
        assertThat(far.plus(Duration.ofDays(365L * 1_000_000)).hasPassed()).isFalse();
        assertThat(far.remaining()).isGreaterThan(Duration.ofDays(365));
    }

    @Test
    @DisplayName("a zero or negative wait is a deadline that has passed, with nothing remaining")
    void zero() {
        assertThat(Deadline.after(Duration.ZERO).hasPassed()).isTrue();
        assertThat(Deadline.after(Duration.ofSeconds(-1)).remainingNanos()).isZero();
        Deadline soon = Deadline.after(Duration.ofSeconds(10));
        Deadline later = Deadline.after(Duration.ofSeconds(20));
        assertThat(soon.min(later)).isSameAs(soon);
        assertThat(later.min(soon)).isSameAs(soon);
    }

    @Test
    @DisplayName("a call's bound is its wait's deadline plus the timeout, and saturates like the deadline")
    void callBound() {
        Deadline wait = Deadline.atNanoTime(1_000);
        assertThat(wait.callBound(Duration.ofNanos(500)).nanoTime()).isEqualTo(1_500);
        assertThat(wait.callBound(Duration.ofSeconds(-1)).nanoTime()).isEqualTo(1_000);
        Deadline far = Deadline.after(Duration.ofDays(365L * 1_000_000));
        assertThat(far.callBound(Duration.ofDays(365L * 1_000_000)).hasPassed()).isFalse();
    }
}
