package io.latchkey.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A small shell process that stops the command if this JVM dies without saying goodbye (kill -9, an
 * OOM kill), at any instant: also between the command's start and whatever this JVM does next.
 *
 * <p>How it knows the command without this JVM telling it: the command starts through a wrapper
 * ({@link #wrap}), a shell in the command's own process that marks its pid as an empty file
 * {@code pid-<pid>} in a directory private to this run, then checks that the file {@code open} is still
 * there, and only then execs the command in the same process. The watchdog reads a pipe only this JVM
 * writes to; when the kernel closes it without a {@code done} line, the watchdog first removes
 * {@code open}, then looks for marks, and sends each marked pid SIGTERM, then SIGKILL after the grace.
 * A wrapper either marked its pid before the watchdog looked, and is stopped, or finds {@code open} gone
 * and exits 125 without running the command. A pid that only this JVM wrote to the pipe after the start
 * would leave a window in which a kill -9 loses the command; here there is none.
 *
 * <p>It ignores SIGINT and SIGHUP, so that a Ctrl-C in the terminal does not take it away, and it signals
 * the command only, not what the command started. {@link #close()} says goodbye: it removes the directory
 * and ends. Used by one thread; {@link #close()} may be called more than once.
 */
final class Watchdog implements AutoCloseable {

    private static final String WATCH = "trap '' INT HUP; d=$1;"
            + " while read -r line; do if [ \"$line\" = done ]; then rm -rf \"$d\"; exit 0; fi; done;"
            + " rm -f \"$d/open\"; pids=;"
            + " for f in \"$d\"/pid-*; do [ -e \"$f\" ] && pids=\"$pids ${f##*/pid-}\"; done;"
            + " if [ -n \"$pids\" ]; then kill -TERM $pids 2>/dev/null; sleep \"$2\"; kill -KILL $pids 2>/dev/null; fi;"
            + " rm -rf \"$d\"";
    private static final String WRAP = "d=$1; shift; : > \"$d/pid-$$\" && [ -e \"$d/open\" ] && exec \"$@\"; exit 125";

    private final Path dir;
    private final Process process;
    private boolean closed;

    private Watchdog(Path dir, Process process) {
        this.dir = dir;
        this.process = process;
    }

    /**
     * Starts the watchdog of one run of {@code program}; null, after one line saying so, if no private
     * directory can be made or no {@code sh} started: then the command runs unwrapped and keeps running
     * if this JVM is killed, as the README says.
     */
    static Watchdog start(Duration killGrace, String program, PrintStream err) {
        long graceSeconds = Math.max(1, (killGrace.toMillis() + 999) / 1000);
        Path dir = null;
        try {
            dir = Files.createTempDirectory("latchkey-guard-");
            Files.createFile(dir.resolve("open"));
            Process p = new ProcessBuilder("sh", "-c", WATCH, "latchkey-watchdog", dir.toString(),
                    Long.toString(graceSeconds)).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            return new Watchdog(dir, p);
        } catch (IOException e) {
            err.println("latchkey: cannot start the watchdog that stops '" + program + "' if latchkey is killed: "
                    + e.getMessage());
            removeQuietly(dir);
            return null;
        }
    }

    /** {@code command} behind the wrapper that marks its pid: the same process, argv and exit status. */
    List<String> wrap(List<String> command) {
        List<String> wrapped = new ArrayList<>(List.of("sh", "-c", WRAP, "latchkey", dir.toString()));
        wrapped.addAll(command);
        return wrapped;
    }

    /** Says goodbye: the command is over or never started, nothing is left to guard, and a pid may be reused. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try (OutputStream out = process.getOutputStream()) {
            out.write("done\n".getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
            // it is gone already: nothing would stop the command now, and nothing needs to
            process.destroyForcibly();
            removeQuietly(dir);
        }
    }

    private static void removeQuietly(Path dir) {
        if (dir == null) {
            return;
        }
        try (var files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // a temporary directory of empty files, left to the system's cleaning
        }
    }
}
