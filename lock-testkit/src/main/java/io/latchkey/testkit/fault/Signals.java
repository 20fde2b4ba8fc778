package io.latchkey.testkit.fault;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * Sends POSIX signals to processes with the {@code kill} command, for the pause fault
 * ({@code SIGSTOP}, {@code SIGCONT}). Stateless and thread-safe.
 */
public final class Signals {

    private Signals() {
    }

    /** Sends {@code SIG<signal>} (for example {@code STOP}) to {@code pid}; fails if it cannot. */
    public static void send(String signal, long pid) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true).start();
            if (!kill.waitFor(30, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + pid + " failed: "
                        + new String(kill.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run kill -" + signal + " " + pid + "; the pause fault needs the"
                    + " kill command of a POSIX system", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending SIG" + signal + " to " + pid, e);
        }
    }
}
