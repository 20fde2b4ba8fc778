package io.latchkey.spi;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * How a backend tells this process's pause from a silent server. A call's start lies in the past here
 * instead of the test sleeping: the helper only compares clock readings.
 */
class PausesTest {

    private static final IOException CAUSE = new IOException("read timed out");

    private static LockBackendUnavailableException silent() {
        return new LockBackendUnavailableException("job", "redis did not answer within 5s; check that it runs", CAUSE);
    }

    private static long ago(Duration d) {
        return System.nanoTime() - d.toNanos();
    }

    @Test
    @DisplayName("a call that gives up more than its bound again past its bound was paused: the message says so, once")
    void overrunFarPastTheBoundIsAPause() {
        Pauses call = Pauses.since(ago(Duration.ofSeconds(20)), Duration.ofSeconds(5));

        assertThat(call.pause()).hasValueSatisfying(p -> assertThat(p).isBetween(Duration.ofSeconds(15), Duration.ofSeconds(16)));
        LockException told = call.explain((LockException) silent(), "job", "lock 'job' (redis key 'latchkey:job'): ",
                "acquiring lock 'job'", "redis");
        assertThat(told).isInstanceOf(LockBackendUnavailableException.class).hasCause(CAUSE)
                .hasMessageStartingWith("lock 'job' (redis key 'latchkey:job'): this process was paused for at least ")
                .hasMessageContaining(" while acquiring lock 'job', a call bounded by 5s:")
                .hasMessageNotContaining("did not answer").hasMessageNotContaining("check that");
        assertThat(((LockBackendUnavailableException) told).lockName()).isEqualTo("job");
        // durations as users write them: whole milliseconds, no PT15.2S
        assertThat(told.getMessage()).containsPattern("paused for at least \\d+(ms|s) while").doesNotContain("PT");
    }

    @Test
    @DisplayName("a call that overran by less than max(bound, 1s) blames the server as its backend says")
    void smallOverrunIsNoPause() {
        LockBackendUnavailableException silent = silent();
        assertThat(Pauses.since(ago(Duration.ofSeconds(9)), Duration.ofSeconds(5)).explain(silent, "job", "", null, "redis"))
                .isSameAs(silent);
        // below a second of overrun nothing counts, however short the bound
        assertThat(Pauses.since(ago(Duration.ofMillis(800)), Duration.ofMillis(100)).pause()).isEmpty();
        assertThat(Pauses.since(ago(Duration.ofMillis(2500)), Duration.ofMillis(100)).pause()).isPresent();
    }

    @Test
    @DisplayName("a failure that is not an unavailability (a refused password) stays as it is, paused or not")
    void otherFailuresStay() {
        LockException refused = new LockException("job", "authentication failed; check the password");
        assertThat(Pauses.since(ago(Duration.ofSeconds(60)), Duration.ofSeconds(1)).explain(refused, "job", "", null, "redis"))
                .isSameAs(refused);
    }

    @Test
    @DisplayName("a waiting thread's wake-up far later than asked is a pause, even early in a long wait")
    void lateWakeUpIsAPause() {
        Pauses wait = Pauses.since(ago(Duration.ofSeconds(3)), Duration.ofSeconds(90));
        assertThat(wait.pause()).isEmpty();
        wait.woke(TimeUnit.MILLISECONDS.toNanos(100));
        assertThat(wait.pause()).hasValueSatisfying(p -> assertThat(p).isBetween(Duration.ofMillis(2800), Duration.ofSeconds(4)));
        assertThat(wait.explain(silent(), "job", "", "waiting for the lock", "zookeeper").getMessage())
                .startsWith("this process was paused for ").contains("a call bounded by 90s")
                .contains("rather than waiting for zookeeper");

        Pauses punctual = Pauses.since(System.nanoTime(), Duration.ofSeconds(60));
        punctual.woke(TimeUnit.MILLISECONDS.toNanos(100));
        assertThat(punctual.pause()).isEmpty();
    }

    @Test
    @DisplayName("the sentence reads without a 'while' clause too, and Pauses.until measures from now to the deadline")
    void sentenceAndUntil() {
        assertThat(Pauses.sentence(Duration.ofMillis(15234), Duration.ofSeconds(5), null, "the brokers"))
                .startsWith("this process was paused for at least 15234ms, a call bounded by 5s: ");
        // a bound measured from now to a deadline prints to the millisecond, not in nanoseconds
        assertThat(Pauses.sentence(Duration.ofSeconds(9), Duration.ofNanos(7_499_869_697L), "waiting", "zookeeper"))
                .contains("a call bounded by 7500ms");
        Pauses until = Pauses.until(Deadline.after(Duration.ofSeconds(7)));
        assertThat(until.bound()).isBetween(Duration.ofSeconds(6), Duration.ofSeconds(7));
        assertThat(until.pause()).isEmpty();
    }
}
