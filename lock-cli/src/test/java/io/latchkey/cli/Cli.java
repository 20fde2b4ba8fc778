package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.latchkey.testkit.fault.ChildJvm;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * {@code latchkey} as a real process: {@code java -cp <the test class path> io.latchkey.cli.Main ...},
 * its output in files of a test's directory. Used from one test thread.
 */
final class Cli implements AutoCloseable {

    private static final AtomicInteger IDS = new AtomicInteger();

    /** How long a JVM may take to start and connect on a loaded two-core machine; the slack of every bound. */
    static final Duration JVM_SLACK = Duration.ofSeconds(10);

    final Process process;
    final long startedNanos;
    private final Path out;
    private final Path err;

    private Cli(Process process, long startedNanos, Path out, Path err) {
        this.process = process;
        this.startedNanos = startedNanos;
        this.out = out;
        this.err = err;
    }

    /** Starts {@code latchkey args...} with {@code env} added to this JVM's environment. */
    static Cli start(Path dir, Map<String, String> env, String... args) {
        int id = IDS.incrementAndGet();
        // env resets the signals a shell may have ignored for the build (nohup ignores SIGHUP, a background
        // job SIGINT) to their defaults, as a terminal starts latchkey; it execs java, so the pid is latchkey's
        // with the JVM options of the latchkey script
        List<String> command = new ArrayList<>(List.of("env", "--default-signal=HUP,INT,TERM"));
        command.addAll(ChildJvm.command());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.latchkey.cli.Main"));
        command.addAll(List.of(args));
        Path out = dir.resolve("cli-" + id + ".out");
        Path err = dir.resolve("cli-" + id + ".err");
        ProcessBuilder pb = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.PIPE);
        pb.environment().remove(Backends.URI_VARIABLE);
        pb.environment().putAll(env);
        try {
            long t = System.nanoTime();
            return new Cli(pb.start(), t, out, err);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Cli start(Path dir, String... args) {
        return start(dir, Map.of(), args);
    }

    /** Waits for the exit and returns its status; fails the test, showing stderr, if it takes longer than {@code bound}. */
    int await(Duration bound) throws InterruptedException {
        if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
            fail("latchkey did not exit within " + bound + "; stderr:\n" + stderr());
        }
        return process.exitValue();
    }

    /** Asserts that latchkey exits within {@code bound} with {@code status}; a failure shows its stderr. */
    void assertExits(Duration bound, int status) throws InterruptedException {
        assertThat(await(bound)).as("exit status; stderr:%n%s", stderr()).isEqualTo(status);
    }

    String stdout() {
        return read(out);
    }

    String stderr() {
        return read(err);
    }

    long pid() {
        return process.pid();
    }

    /** Sends {@code SIG<name>} to latchkey itself. */
    void signal(String name) {
        io.latchkey.testkit.fault.Signals.send(name, process.pid());
    }

    private static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Polls {@code condition} every 20 ms until it holds; fails with {@code what} after {@code bound}. */
    static void awaitTrue(Duration bound, String what, BooleanSupplier condition) throws InterruptedException {
        awaitTrue(bound, what, condition, List.of());
    }

    /**
     * As {@link #awaitTrue(Duration, String, BooleanSupplier)}; a failure also shows each of {@code runs}:
     * its exit status (or that it still runs) and its stderr.
     */
    static void awaitTrue(Duration bound, String what, BooleanSupplier condition, List<Cli> runs)
            throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                StringBuilder shown = new StringBuilder();
                for (Cli run : runs) {
                    shown.append("\nlatchkey ").append(run.pid()).append(run.process.isAlive() ? " still runs"
                            : " exited " + run.process.exitValue()).append("; stderr:\n").append(run.stderr());
                }
                fail("timed out after " + bound + " waiting until " + what + shown);
            }
            Thread.sleep(20); // polling a file or a process: nothing to wait on
        }
    }

    /** Kills latchkey and every process it started, including those already adopted by init. */
    @Override
    public void close() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }
}
