package io.latchkey.testkit;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;

/**
 * What this JVM writes to {@link System#err} while it is open, still written through: the log lines of
 * the kit's SLF4J binding (slf4j-simple, which looks {@code System.err} up at each line), for tests of
 * what the library logs. The kit runs one test at a time in a JVM, so one capture is open at a time.
 *
 * <p>Thread-safe: any thread may log while a test reads.
 */
final class StderrLines implements AutoCloseable {

    private final PrintStream original;
    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

    private StderrLines(PrintStream original) {
        this.original = original;
    }

    /** Starts capturing; {@link #close()} puts the previous stream back. */
    static StderrLines capture() {
        StderrLines lines = new StderrLines(System.err);
        OutputStream tee = new OutputStream() {
            @Override
            public void write(int b) {
                lines.original.write(b);
                synchronized (lines.captured) {
                    lines.captured.write(b);
                }
            }

            @Override
            public void write(byte[] b, int off, int len) {
                lines.original.write(b, off, len);
                synchronized (lines.captured) {
                    lines.captured.write(b, off, len);
                }
            }
        };
        System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
        return lines;
    }

    /** The complete lines written so far. */
    List<String> lines() {
        String text;
        synchronized (captured) {
            text = captured.toString(StandardCharsets.UTF_8);
        }
        int end = text.lastIndexOf('\n');
        return end < 0 ? List.of() : text.substring(0, end).lines().toList();
    }

    /** The lines that match {@code which}, once at least one does or {@code bound} passed. */
    List<String> await(Duration bound, Predicate<String> which) throws InterruptedException {
        long giveUp = System.nanoTime() + bound.toNanos();
        while (true) {
            List<String> matching = lines().stream().filter(which).toList();
            if (!matching.isEmpty() || System.nanoTime() - giveUp >= 0) {
                return matching;
            }
            Thread.sleep(10); // polling a buffer another thread fills
        }
    }

    @Override
    public void close() {
        System.setErr(original);
    }
}
