package io.latchkey.testkit.fault;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Sends POSIX signals to processes with the {@code kill} command, for the pause fault
 * ({@code SIGSTOP}, {@code SIGCONT}). Stateless and thread-safe.
 *
 * <p>{@link #stop} returns only once the process is stopped, where the system shows it
 * ({@code /proc} on Linux): a test that pauses a server and then expects silence must not race the
 * signal, and a pid that is not the expected process's fails there, loudly, instead of in the test's
 * assertion.
 */
public final class Signals {

    /** How long a stopped process may take to show every thread stopped; a guard, not a bound any test asserts. */
    private static final Duration STOP_GUARD = Duration.ofSeconds(30);

    private Signals() {
    }

    /** Sends {@code SIG<signal>} (for example {@code STOP}) to {@code pid}; fails if it cannot. */
    public static void send(String signal, long pid) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true).start();
            if (!kill.waitFor(30, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + pid + " failed: "
                        + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run kill -" + signal + " " + pid + "; the pause fault needs the"
                    + " kill command of a POSIX system", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending SIG" + signal + " to " + pid, e);
        }
    }

    /**
     * Stops {@code process} with {@code SIGSTOP} and waits until every one of its threads shows
     * stopped (on Linux; elsewhere the signal alone). Fails if the process is not alive before or after.
     */
    public static void stop(ProcessHandle process) {
        requireAlive(process, "STOP");
        send("STOP", process.pid());
        Path tasks = Path.of("/proc", Long.toString(process.pid()), "task");
        if (!Files.isDirectory(tasks)) {
            return; // no /proc: the signal is all this system offers
        }
        long end = System.nanoTime() + STOP_GUARD.toNanos();
        List<String> running = running(tasks);
        while (!running.isEmpty()) {
            requireAlive(process, "STOP");
            if (System.nanoTime() - end > 0) {
                throw new IllegalStateException("process " + process.pid() + " still has running threads " + running
                        + " " + STOP_GUARD.toSeconds() + " s after SIGSTOP");
            }
            sleepBriefly();
            running = running(tasks);
        }
    }

    /** Resumes a stopped {@code process} with {@code SIGCONT}; fails if it is not alive. */
    public static void resume(ProcessHandle process) {
        requireAlive(process, "CONT");
        send("CONT", process.pid());
    }

    private static void requireAlive(ProcessHandle process, String signal) {
        if (!process.isAlive()) {
            throw new IllegalStateException("cannot send SIG" + signal + " to process " + process.pid()
                    + ": it is not alive (its pid may belong to another process by now)");
        }
    }

    /** The threads under {@code tasks} whose state is neither stopped ({@code T}, {@code t}) nor gone. */
    private static List<String> running(Path tasks) {
        List<String> running = new ArrayList<>();
        try (Stream<Path> threads = Files.list(tasks)) {
            for (Path thread : (Iterable<Path>) threads::iterator) {
                String state = state(thread.resolve("stat"));
                if (state != null && !state.equals("T") && !state.equals("t")) {
                    running.add(thread.getFileName() + ":" + state);
                }
            }
        } catch (NoSuchFileException e) {
            return running; // the process ended: requireAlive says so
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + tasks, e);
        }
        return running;
    }

    /** The state letter in a {@code /proc/.../stat} line (after the command name in parentheses), or null if gone. */
    private static String state(Path stat) {
        try {
            String line = Files.readString(stat, StandardCharsets.UTF_8);
            int afterName = line.lastIndexOf(')');
            return line.substring(afterName + 2, afterName + 3);
        } catch (IOException e) {
            return null; // the thread ended meanwhile
        }
    }

    private static void sleepBriefly() {
        try {
            Thread.sleep(1); // polling the kernel's view of the process, not a synchronisation
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a process to stop", e);
        }
    }
}
