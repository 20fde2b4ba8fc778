package io.latchkey.example.memory;

import io.latchkey.testkit.LockServer;
import io.latchkey.testkit.fault.ChildJvm;
import io.latchkey.testkit.fault.Signals;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A {@link MemoryLockServer} in a child JVM, as the kit wants a server: real endpoints, a real
 * restart (SIGKILL, then the same port and data folder again). The fixture a third-party backend
 * writes in place of the kit's Testcontainers fixtures.
 *
 * <p>The contract drives it from one thread at a time, not always the same one: the process it runs
 * is published to the next.
 */
final class MemoryServerProcess implements LockServer {

    /** A guard against hangs while a JVM starts on a loaded machine, not a bound any test asserts. */
    private static final Duration STARTUP_GUARD = Duration.ofSeconds(60);

    private final Path data;
    private final Flaw flaw;
    private volatile Process process;
    private volatile int port;

    private MemoryServerProcess(Path data, Flaw flaw) {
        this.data = data;
        this.flaw = flaw;
    }

    /** Starts a server with {@code flaw} ({@link Flaw#NONE} for the honest one) on a free port. */
    static MemoryServerProcess start(Flaw flaw) {
        try {
            MemoryServerProcess server = new MemoryServerProcess(Files.createTempDirectory("memory-lock-server-"), flaw);
            server.launch(0);
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public List<InetSocketAddress> endpoints() {
        return List.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    }

    @Override
    public String uri(List<InetSocketAddress> endpoints) {
        return "memory://" + endpoints.stream().map(e -> e.getHostString() + ":" + e.getPort())
                .collect(Collectors.joining(","));
    }

    @Override
    public void restart() {
        kill();
        launch(port);
    }

    /**
     * Freezes the server process with SIGSTOP: its port still accepts connections, nothing answers.
     * Returns once every thread of it is stopped.
     */
    @Override
    public void pause() {
        Signals.stop(process.toHandle());
    }

    /** Resumes the server process with SIGCONT. */
    @Override
    public void unpause() {
        Signals.resume(process.toHandle());
    }

    /** Whether the server keeps any state (holder or waiters) of the lock {@code key}. */
    boolean hasState(String key) {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
                BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8))) {
            PrintWriter out = new PrintWriter(socket.getOutputStream(), true, StandardCharsets.UTF_8);
            out.println("inspect 1 " + key);
            return in.readLine().equals("state 1 present");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot inspect the memory server on port " + port, e);
        }
    }

    @Override
    public void close() {
        kill();
        try (Stream<Path> files = Files.walk(data)) {
            files.sorted((a, b) -> b.compareTo(a)).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary folder left behind is no reason to fail a test
        }
    }

    private void launch(int onPort) {
        List<String> command = ChildJvm.command();
        command.addAll(List.of("-Xmx64m", "-cp", System.getProperty("java.class.path"), MemoryLockServer.class.getName(),
                Integer.toString(onPort), data.toString(), "--flaw=" + flaw.optionValue()));
        try {
            process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            String line = CompletableFuture.supplyAsync(() -> {
                try {
                    return out.readLine();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }).get(STARTUP_GUARD.toMillis(), TimeUnit.MILLISECONDS);
            if (line == null || !line.startsWith("listening ")) {
                throw new IllegalStateException("the memory server did not start on port " + onPort + ": " + line);
            }
            port = Integer.parseInt(line.substring("listening ".length()));
        } catch (Exception e) {
            kill();
            throw new IllegalStateException("cannot start the memory server on port " + onPort, e);
        }
    }

    private void kill() {
        if (process != null) {
            process.destroyForcibly();
            try {
                process.waitFor(STARTUP_GUARD.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
