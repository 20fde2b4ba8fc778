package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.spi.Durations;
import io.latchkey.testkit.fault.ChildHolder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;

/**
 * Honest messages at the edges: a waiter whose own process was paused is told so
 * ("this process was paused for N"), not that the server is down; a waiter that was not paused is told
 * that the server did not answer, not that it was paused.
 *
 * <p>The waiter runs in a child JVM ({@link ChildHolder}) and calls {@code tryLock(wait)} on a server
 * that does not answer: the server is frozen with {@link LockServer#pause()} after the child took and
 * released the lock once, so the child is connected and its classes are loaded. Once the child's call
 * waits for the server, the test stops the child with SIGSTOP for {@code 2 × (wait + timeout) + 1s},
 * longer than any bound of the call, even counted twice, and resumes it with SIGCONT. The child's call
 * then gives up at once, far past its bound: its {@link LockBackendUnavailableException} must say
 * that this process was paused, for a time that the stop explains (at least the stop less the call's
 * bound, at most the whole stop plus one {@code tryLock} bound), and must not blame the server. The
 * control runs the same call without the stop.
 *
 * <p>Every backend words its own unavailability, so "blames the server" is what all of them say then:
 * the server did not answer or could not be reached, with advice to check it ({@link #BLAMES_SERVER}).
 * Tagged {@code edges} and {@code pauses}: {@code -Dtest=<contract test> -Dgroups=pauses} runs this group alone.
 */
@Tag("edges")
@Tag("pauses")
abstract class PausedWaiterTests extends ContractGroup {

    /** The words of the sentence every backend uses for a pause of its own process ({@code io.latchkey.spi.Pauses}). */
    static final String PAUSED = "this process was paused for ";

    /** What a message that blames the server says, on every backend. */
    static final Pattern BLAMES_SERVER = Pattern.compile("did not answer|could not be reached|check that",
            Pattern.CASE_INSENSITIVE);

    private static final Pattern PAUSE_LENGTH = Pattern.compile(Pattern.quote(PAUSED) + "(?:at least )?(\\d+(?:ms|s|m|h))");

    @Test
    @DisplayName("a waiter stopped for 2 × (wait + timeout) + 1s while the server is silent is told that its process was"
            + " paused, for about that long, not that the server is down")
    void pausedWaiterIsToldItsProcessWasPaused(TestReporter report) throws Exception {
        ChildHolder child = childHolder();
        String lockName = name();
        warmUp(child, lockName);
        Duration wait = slack();
        Duration callBound = wait.plus(timeout());
        Duration stop = callBound.multipliedBy(2).plusSeconds(1);

        String message = paused(() -> {
            child.startAcquire(lockName, wait, tryBound(wait));
            long beforeStop = System.nanoTime();
            child.pause();
            long stopped = System.nanoTime();
            long resumeAt = stopped + stop.toNanos();
            // the fault itself is a stop of this length: there is nothing to wait for but the clock
            for (long left = resumeAt - System.nanoTime(); left > 0; left = resumeAt - System.nanoTime()) {
                TimeUnit.NANOSECONDS.sleep(left);
            }
            long resuming = System.nanoTime();
            child.resume();
            long resumed = System.nanoTime();
            String m = failure(child, lockName, wait, "stopped for " + Durations.format(stop));

            Duration reported = pauseLength(m);
            assertThat(reported).as("the pause reported after a stop of %s, in: %s", Durations.format(stop), m)
                    .isGreaterThanOrEqualTo(Duration.ofNanos(resuming - stopped).minus(callBound))
                    .isLessThanOrEqualTo(Duration.ofNanos(resumed - beforeStop).plus(tryBound(wait)));
            return m;
        });
        report.publishEntry("message of the stopped waiter", message);

        assertThat(message).as("the message of a waiter whose process was paused")
                .doesNotContainPattern(BLAMES_SERVER);
    }

    @Test
    @DisplayName("control: the same waiter, not stopped, is told that the silent server did not answer, not that its"
            + " process was paused")
    void silentServerIsBlamedWhenTheWaiterRan(TestReporter report) throws Exception {
        ChildHolder child = childHolder();
        String lockName = name();
        warmUp(child, lockName);
        Duration wait = slack();

        String message = paused(() -> {
            child.startAcquire(lockName, wait, tryBound(wait));
            return failure(child, lockName, wait, "not stopped");
        });
        report.publishEntry("message of the waiter that ran", message);

        assertThat(message).as("the message of a waiter that ran throughout").doesNotContain(PAUSED)
                .containsPattern(BLAMES_SERVER);
    }

    // ---- helpers

    /** The child takes and releases {@code lockName} once: connected, its classes loaded, the lock's state made. */
    private void warmUp(ChildHolder child, String lockName) {
        ChildHolder.Reply got = child.acquire(lockName, patientWait(), patientWait().plus(ChildHolder.STARTUP_GUARD));
        assertThat(got.kind()).as("the child's first acquire of a free lock: %s", got).isEqualTo("acquired");
        ChildHolder.Reply released = child.request("release", timeout().plus(slack()));
        assertThat(released.kind()).as("the child's release: %s", released).isEqualTo("released");
    }

    /**
     * The child's answer to the acquire under way: a {@link LockBackendUnavailableException} naming the
     * lock, whose message is returned.
     */
    private String failure(ChildHolder child, String lockName, Duration wait, String how) {
        ChildHolder.Reply reply = child.next(tryBound(wait).plus(timeout()));
        assertThat(reply.kind()).as("the answer of a waiter %s on a silent server: %s", how, reply).isEqualTo("error");
        String prefix = LockBackendUnavailableException.class.getName() + ": ";
        assertThat(reply.argument()).as("the exception of a waiter %s on a silent server", how).startsWith(prefix)
                .contains(lockName);
        return reply.argument().substring(prefix.length());
    }

    private static Duration pauseLength(String message) {
        Matcher m = PAUSE_LENGTH.matcher(message);
        if (!m.find()) {
            throw new AssertionError("the message does not say '" + PAUSED + "<duration>': " + message);
        }
        return Durations.parse("pause", m.group(1));
    }

    /** Runs {@code body} with the server paused, and thaws it whatever happens. */
    private <T> T paused(java.util.concurrent.Callable<T> body) throws Exception {
        LockServer server = contract().server();
        server.pause();
        try {
            return body.call();
        } finally {
            server.unpause();
        }
    }
}
