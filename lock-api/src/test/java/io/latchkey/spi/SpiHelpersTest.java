package io.latchkey.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

    @Test
    @DisplayName("a bad duration's message quotes it, naming the option if one is given")
    void badDuration() {
        assertThatThrownBy(() -> Durations.parse("lease", "5 minutes")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bad duration '5 minutes' for option 'lease': write a whole number with a unit, such as"
                        + " 500ms, 15s, 2m or 1h");
        assertThatThrownBy(() -> Durations.parse("5 minutes")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bad duration '5 minutes': write a whole number with a unit, such as 500ms, 15s, 2m or 1h");
        assertThat(Durations.parse("15s")).isEqualTo(Duration.ofSeconds(15));
    }

    @Test
    @DisplayName("a URI shown by a tool has its password redacted as connect's messages have it; no provider here serves a scheme")
    void redactAndSchemes() {
        assertThat(LockUri.redact("redis://user:s3cret@host:6379/0?lease=5s")).isEqualTo("redis://user:****@host:6379/0?lease=5s");
        assertThat(LockUri.redact("zookeeper://zk1:2181/latchkey")).isEqualTo("zookeeper://zk1:2181/latchkey");
        assertThat(LockUri.servedSchemes()).isEmpty();
    }
}
