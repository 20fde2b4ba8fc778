package io.latchkey.testkit.fault;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * A lock holder in a child JVM ({@link ChildHolderMain}), launched with the test's class path, that the
 * test can command, kill with SIGKILL, and pause with SIGSTOP and SIGCONT.
 *
 * <p>The child's standard error goes to a temporary file whose end is quoted in every failure. Every
 * wait for an answer is bounded: a child that does not answer fails the test, it never hangs it.
 *
 * <p>Not thread-safe: one test thread drives a child.
 */
public final class ChildHolder implements AutoCloseable {

    /**
     * How long a child JVM may take to start and connect. A guard against hangs on a loaded machine,
     * not a bound the contract asserts.
     */
    public static final Duration STARTUP_GUARD = Duration.ofSeconds(90);

    private static final String EOF = "\u0000eof";
    private static final String EVENT = "event ";

    private final Process process;
    private final Path stderr;
    private final Writer stdin;
    private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
    private volatile Consumer<String> events;

    private ChildHolder(Process process, Path stderr) {
        this.process = process;
        this.stderr = stderr;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(this::readAnswers, "testkit-child-" + process.pid() + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /** Launches a child that connects with {@code uri}, and waits until it is connected. */
    public static ChildHolder start(String uri) {
        return start(uri, List.of());
    }

    /**
     * Launches a child with extra JVM options (system properties, for example) that connects with
     * {@code uri}, and waits until it is connected.
     */
    public static ChildHolder start(String uri, List<String> jvmOptions) {
        Path stderr;
        try {
            stderr = Files.createTempFile("latchkey-child-", ".log");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> command = ChildJvm.command();
        command.add("-Xmx256m");
        String provider = System.getProperty("latchkey.provider");
        if (provider != null) {
            command.add("-Dlatchkey.provider=" + provider);
        }
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(ChildHolderMain.class.getName());
        command.add(uri);
        Process process;
        try {
            process = new ProcessBuilder(command).redirectError(stderr.toFile()).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot launch a child JVM", e);
        }
        ChildHolder child = new ChildHolder(process, stderr);
        try {
            Reply ready = child.next(STARTUP_GUARD);
            if (!ready.kind().equals("ready")) {
                throw child.failure("the child JVM did not connect: " + ready);
            }
        } catch (RuntimeException | Error e) {
            child.close();
            throw e;
        }
        return child;
    }

    /** One answer of the child, with when the command was sent and when the answer was read. */
    public record Reply(String kind, String argument, long sentAt, long receivedAt) {
    }

    /** The child's process id. */
    public long pid() {
        return process.pid();
    }

    /** Asks the child to acquire {@code lockName} waiting at most {@code wait}; answers within {@code bound}. */
    public Reply acquire(String lockName, Duration wait, Duration bound) {
        return request("acquire " + wait.toMillis() + " " + URLEncoder.encode(lockName, StandardCharsets.UTF_8), bound);
    }

    /**
     * Asks the child to campaign in election {@code name}; answers {@code campaigning} within {@code bound}.
     * The candidacy's {@code event elected <term>} and {@code event revoked <term> <reason> <valid>} lines
     * go to the {@link #onEvents} sink, which must be set first.
     */
    public Reply campaign(String name, Duration bound) {
        if (events == null) {
            throw new IllegalStateException("set onEvents before campaign: the election's events would be taken as answers");
        }
        return request("campaign " + URLEncoder.encode(name, StandardCharsets.UTF_8), bound);
    }

    /**
     * Asks the child to acquire {@code lockName} waiting at most {@code wait}, and returns once the child
     * says that it is trying (within {@code bound}): its calling thread waits inside {@code tryLock}, for
     * the backend's answer or between attempts. A test may stop the child then and know that the call
     * began before the stop. The call's own answer follows with {@link #next}.
     */
    public Reply startAcquire(String lockName, Duration wait, Duration bound) {
        Reply r = request("announced-acquire " + wait.toMillis() + " " + URLEncoder.encode(lockName, StandardCharsets.UTF_8),
                bound);
        if (!r.kind().equals("trying")) {
            throw failure("the child did not start acquiring '" + lockName + "': " + r);
        }
        return r;
    }

    /**
     * Asks the child to take a permit of semaphore {@code name} of {@code permits} permits, waiting at
     * most {@code wait}; answers within {@code bound}: {@code acquired <token> <slot>} or {@code empty}.
     * The child then holds the permit as it holds a lock's lease ({@code check-then-write},
     * {@code await-lost}, {@code release}).
     */
    public Reply acquirePermit(String name, int permits, Duration wait, Duration bound) {
        return request("acquire-permit " + wait.toMillis() + " " + permits + " " + URLEncoder.encode(name, StandardCharsets.UTF_8),
                bound);
    }

    /**
     * Asks the child to take read-write lock {@code name}'s write lock ({@code write}) or read lock,
     * waiting at most {@code wait}; answers within {@code bound}: {@code acquired <token>} or {@code empty}.
     * The child then holds it as it holds a lock's lease.
     */
    public Reply acquireMode(String name, boolean write, Duration wait, Duration bound) {
        return request((write ? "acquire-write " : "acquire-read ") + wait.toMillis() + " "
                + URLEncoder.encode(name, StandardCharsets.UTF_8), bound);
    }

    /**
     * Asks the child to take the multi-lock of {@code names}, waiting at most {@code wait}; answers within
     * {@code bound}: {@code acquired <token>,<token>...} (in the multi-lock's name order) or {@code empty}.
     * The child then holds it as it holds a lock's lease ({@code await-lost}, {@code release}).
     */
    public Reply acquireMulti(List<String> names, Duration wait, Duration bound) {
        return request("acquire-multi " + wait.toMillis() + " " + names.stream()
                .map(n -> URLEncoder.encode(n, StandardCharsets.UTF_8)).collect(Collectors.joining(" ")),
                bound);
    }

    /** Sends a command without waiting for the answer (for a paused child); returns when it was sent. */
    public long send(String command) {
        long sentAt = System.nanoTime();
        try {
            stdin.write(command + "\n");
            stdin.flush();
        } catch (IOException e) {
            throw failure("cannot send '" + command + "' to the child: " + e);
        }
        return sentAt;
    }

    /** Sends {@code command} and waits at most {@code bound} for its (first) answer. */
    public Reply request(String command, Duration bound) {
        long sentAt = send(command);
        Reply r = next(bound);
        return new Reply(r.kind(), r.argument(), sentAt, r.receivedAt());
    }

    /** The next answer, waiting at most {@code bound}; its {@code sentAt} is unknown here and set to its receipt. */
    public Reply next(Duration bound) {
        String line;
        try {
            line = answers.poll(bound.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure("interrupted while waiting for the child");
        }
        long at = System.nanoTime();
        if (line == null) {
            throw failure("the child did not answer within " + bound);
        }
        if (line.equals(EOF)) {
            answers.add(EOF);
            throw failure("the child closed its output (exited?)");
        }
        String[] parts = line.split(" ", 2);
        return new Reply(parts[0], parts.length > 1 ? parts[1] : "", at, at);
    }

    /**
     * Hands every {@code event ...} line of the child (of {@code contend}, see {@link ChildHolderMain})
     * to {@code sink}, without its {@code event } prefix, on the thread that reads the child's output,
     * instead of queuing it as an answer. Set it before the command that starts the events.
     */
    public void onEvents(Consumer<String> sink) {
        this.events = sink;
    }

    /** Kills the child with SIGKILL and waits until it is gone. */
    public void kill() {
        process.destroyForcibly();
        try {
            if (!process.waitFor(STARTUP_GUARD.toMillis(), TimeUnit.MILLISECONDS)) {
                throw failure("the child did not die after SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Pauses the child with SIGSTOP. */
    public void pause() {
        Signals.stop(process.toHandle());
    }

    /** Resumes a paused child with SIGCONT. */
    public void resume() {
        Signals.resume(process.toHandle());
    }

    /** Whether the process is still alive. */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** Ends the child: politely if it answers, with SIGKILL otherwise. Idempotent. */
    @Override
    public void close() {
        if (process.isAlive()) {
            try {
                Signals.send("CONT", pid());
                send("exit");
                process.waitFor(5, TimeUnit.SECONDS);
            } catch (RuntimeException | Error e) {
                // it did not listen: kill it below
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process.destroyForcibly();
        }
        try {
            Files.deleteIfExists(stderr);
        } catch (IOException e) {
            // a temporary file left behind is no reason to fail a test
        }
    }

    /** The lines the child has written to its standard error so far (its log, with the test's SLF4J binding). */
    public List<String> stderrLines() {
        try {
            return Files.readAllLines(stderr, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the child's standard error " + stderr, e);
        }
    }

    /** An assertion failure quoting the end of the child's standard error. */
    public AssertionError failure(String message) {
        return new AssertionError(message + "; the child's standard error ends with:\n" + stderrTail());
    }

    private String stderrTail() {
        try {
            List<String> lines = stderrLines();
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (UncheckedIOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    private void readAnswers() {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith(ChildHolderMain.PREFIX)) {
                    String answer = line.substring(ChildHolderMain.PREFIX.length());
                    Consumer<String> sink = events;
                    if (sink != null && answer.startsWith(EVENT)) {
                        sink.accept(answer.substring(EVENT.length()));
                    } else {
                        answers.add(answer);
                    }
                }
            }
        } catch (IOException e) {
            // the child is gone; the marker below says so
        }
        answers.add(EOF);
    }
}
