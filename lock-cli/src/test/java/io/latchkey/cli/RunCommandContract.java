package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.spi.LockUri;
import io.latchkey.testkit.fault.CuttableUri;
import io.latchkey.testkit.fault.TcpProxy;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What {@code latchkey run} promises, checked with real processes against a real backend; a backend's
 * test supplies the URIs and the network cut.
 *
 * <p>Bounds come from {@link #lease()}, the waits and grace given on the command line, plus
 * {@link Cli#JVM_SLACK} for starting a JVM on a loaded machine; never from tuned constants.
 */
abstract class RunCommandContract {

    private static final AtomicInteger LOCKS = new AtomicInteger();

    @TempDir
    Path dir;

    private final List<Cli> started = new ArrayList<>();
    private final List<Long> orphans = new ArrayList<>();

    /** The lease of every URI of the tests, with a timeout that leaves room for the margin. */
    static final Duration LEASE = Duration.ofSeconds(2);
    /** The query of every URI of the tests: the options that {@link #LEASE} says. */
    static final String QUERY = "lease=2s&timeout=1s";

    private CuttableUri cuttable; // made by the first test that cuts

    /** The backend's address, as the test's server listens on it. */
    abstract InetSocketAddress server();

    /** The backend's URI reaching it at {@code endpoint}, with {@link #QUERY}. */
    abstract String uri(InetSocketAddress endpoint);

    @AfterEach
    void cleanUp() {
        if (cuttable != null) {
            cuttable.close();
            cuttable = null;
        }
        started.forEach(Cli::close);
        orphans.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
    }

    /** The backend's URI, with a {@code lease} of {@link #lease()}. */
    String uri() {
        return uri(server());
    }

    /** The backend's URI through a proxy that {@link #cut()} cuts, with the same lease. */
    String cuttableUri() {
        if (cuttable == null) {
            cuttable = newCuttableUri();
        }
        return cuttable.uri();
    }

    /**
     * A URI whose clients can be cut off the server, with the same lease. The default puts a TCP proxy
     * in front of {@link #server()}; a backend whose clients follow addresses the server announces
     * (Kafka) overrides it.
     */
    CuttableUri newCuttableUri() {
        TcpProxy proxy = TcpProxy.start(server());
        return CuttableUri.of(uri(proxy.endpoint()), proxy::cut, proxy::restore, proxy::close);
    }

    /** The lease of both URIs. */
    Duration lease() {
        return LEASE;
    }

    /** Cuts the clients of {@link #cuttableUri()} off the server. */
    void cut() {
        cuttable.cut();
    }

    @Test
    @DisplayName("the command's exit status is latchkey's")
    void exitStatusPassesThrough() throws Exception {
        assertThat(run(uri(), lockName(), "sh", "-c", "exit 7").await(bound())).isEqualTo(7);
    }

    @Test
    @DisplayName("a command killed by signal N makes latchkey exit with 128+N")
    void signalDeathIs128PlusN() throws Exception {
        assertThat(run(uri(), lockName(), "sh", "-c", "kill -KILL $$").await(bound())).isEqualTo(128 + 9);
        assertThat(run(uri(), lockName(), "sh", "-c", "kill -TERM $$").await(bound())).isEqualTo(128 + 15);
    }

    @Test
    @DisplayName("a second run on a held lock exits with the conflict code within its wait")
    void heldLockIsAConflict() throws Exception {
        String name = lockName();
        holdInBackground(name);
        Duration wait = Duration.ofSeconds(1);
        long t0 = System.nanoTime();
        Cli second = run(uri(), name, List.of("--wait", "1s"), "sh", "-c", "exit 0");
        second.assertExits(wait.plus(bound()), ExitCodes.CONFLICT);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(wait);
        assertThat(second.stderr()).contains("lock '" + name + "' is held by someone else");
        assertThat(run(uri(), name, List.of("--conflict-exit-code", "9"), "true").await(bound())).isEqualTo(9);
    }

    @Test
    @DisplayName("the command gets the lock's name and URI, and a fencing token that grows run after run")
    void environmentAndGrowingTokens() throws Exception {
        String name = lockName();
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Path env = dir.resolve("env-" + i);
            Cli cli = run(uri(), name, List.of(), "sh", "-c",
                    "printf '%s\\n%s\\n%s\\n' \"$LATCHKEY_LOCK\" \"$LATCHKEY_FENCING_TOKEN\" \"$LATCHKEY_URI\" > '" + env + "'");
            cli.assertExits(bound(), 0);
            List<String> lines = Files.readAllLines(env);
            assertThat(lines.get(0)).isEqualTo(name);
            // the command sees the URI without its password (a database URI has one)
            assertThat(lines.get(2)).isEqualTo(LockUri.redact(uri()));
            tokens.add(Long.parseLong(lines.get(1)));
        }
        assertThat(tokens).isSorted().doesNotHaveDuplicates();
    }

    @ParameterizedTest(name = "SIG{0}")
    @ValueSource(strings = {"TERM", "INT", "HUP"})
    @DisplayName("SIGTERM, SIGINT or SIGHUP while waiting ends the wait within a second, exit 128+N")
    void signalWhileWaiting(String signal) throws Exception {
        String name = lockName();
        holdInBackground(name);
        Cli waiter = run(uri(), name, List.of("--wait", "5m", "--verbose"), "true");
        Cli.awaitTrue(bound(), "the second run waits", () -> waiter.stderr().contains("waiting up to"));
        long signalled = System.nanoTime();
        waiter.signal(signal);
        waiter.assertExits(bound(), 128 + number(signal));
        // the JVM's own reaction to a signal is immediate; one second for the wait to end, as promised,
        // and one more for a loaded machine to schedule the exit
        assertThat(Duration.ofNanos(System.nanoTime() - signalled)).isLessThan(Duration.ofSeconds(2));
        assertThat(waiter.stderr()).contains("SIG" + signal + " while waiting for lock '" + name + "'");
    }

    @ParameterizedTest(name = "SIG{0}")
    @ValueSource(strings = {"TERM", "INT", "HUP"})
    @DisplayName("SIGTERM, SIGINT or SIGHUP while holding reaches the command, and the lock is released when it ends")
    void signalWhileHolding(String signal) throws Exception {
        String name = lockName();
        Path ready = dir.resolve("ready");
        Path marker = dir.resolve("got-term");
        Cli holder = run(uri(), name, List.of(), "sh", "-c",
                "trap 'echo got > \"" + marker + "\"; exit 42' " + signal + "; touch '" + ready + "'; while true; do sleep 0.1; done");
        Cli.awaitTrue(bound(), "the command runs", () -> Files.exists(ready));
        holder.signal(signal);
        holder.assertExits(bound(), 42);
        assertThat(marker).exists();
        assertThat(run(uri(), name, "true").await(bound())).isZero();
    }

    @Test
    @DisplayName("a lost lease stops the command with SIGTERM and latchkey exits with the loss code")
    void lossTerminatesTheCommand() throws Exception {
        String name = lockName();
        Path ready = dir.resolve("ready");
        Path marker = dir.resolve("got-term");
        Cli holder = run(cuttableUri(), name, List.of("--kill-grace", "30s"), "sh", "-c",
                "trap 'echo term > \"" + marker + "\"; exit 0' TERM; touch '" + ready + "'; while true; do sleep 0.1; done");
        Cli.awaitTrue(bound(), "the command runs", () -> Files.exists(ready));
        long cutAt = System.nanoTime();
        cut();
        // the lease runs out within `lease` of the cut; the command gets SIGTERM then, not after the 30s grace
        holder.assertExits(lease().plus(bound()), ExitCodes.LOCK_LOST);
        assertThat(Duration.ofNanos(System.nanoTime() - cutAt)).isLessThan(lease().plus(bound()));
        assertThat(marker).exists();
        assertThat(holder.stderr()).contains("'" + name + "'").contains("SIGTERM");
    }

    @Test
    @DisplayName("a release that cannot reach the backend when the command ends keeps the command's exit status,"
            + " and the lock is free again within the lease")
    void cutReleaseKeepsTheCommandsStatus() throws Exception {
        String name = lockName();
        Path ready = dir.resolve("ready");
        Path go = dir.resolve("go");
        Cli holder = run(cuttableUri(), name, List.of(), "sh", "-c",
                "touch '" + ready + "'; while [ ! -e '" + go + "' ]; do sleep 0.05; done; exit 7");
        Cli.awaitTrue(bound(), "the command runs", () -> Files.exists(ready));
        cut();
        long cutAt = System.nanoTime();
        Files.createFile(go);
        holder.assertExits(bound(), 7);
        // one line naming the lock if the release failed (none if the backend signalled the loss at the cut)
        assertThat(holder.stderr()).doesNotContain("unexpected error");
        // the lock, left held by the cut release (or lost at the cut), expires within the lease
        run(uri(), name, List.of("--wait", "5m"), "true").assertExits(lease().plus(bound()), 0);
        assertThat(Duration.ofNanos(System.nanoTime() - cutAt)).isLessThan(lease().plus(bound()));
    }

    @Test
    @DisplayName("a command that ignores SIGTERM after a loss is killed with its children after the grace")
    void lossKillsAStubbornCommand() throws Exception {
        String name = lockName();
        Path pids = dir.resolve("pids");
        Duration grace = Duration.ofSeconds(1);
        Cli holder = run(cuttableUri(), name, List.of("--kill-grace", "1s"), "sh", "-c",
                "trap '' TERM; sleep 300 & echo $$ $! > '" + pids + ".tmp'; mv '" + pids + ".tmp' '" + pids + "';"
                        + " while true; do sleep 0.1; done");
        Cli.awaitTrue(bound(), "the command runs", () -> Files.exists(pids));
        List<Long> tree = readPids(pids);
        orphans.addAll(tree);
        long cutAt = System.nanoTime();
        cut();
        holder.assertExits(lease().plus(grace).plus(bound()), ExitCodes.LOCK_LOST);
        Duration took = Duration.ofNanos(System.nanoTime() - cutAt);
        assertThat(took).isGreaterThanOrEqualTo(grace);
        for (long pid : tree) {
            Cli.awaitTrue(bound(), "process " + pid + " is gone",
                    () -> ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true));
        }
        assertThat(holder.stderr()).contains("SIGKILL");
    }

    @Test
    @DisplayName("a latchkey run killed with -9 leaves the lock free within the lease, and its command is stopped")
    void killedRunFreesTheLock() throws Exception {
        String name = lockName();
        Path pid = dir.resolve("pid");
        Cli holder = run(uri(), name, List.of(), "sh", "-c", "echo $$ > '" + pid + ".tmp'; mv '" + pid + ".tmp' '" + pid
                + "'; exec sleep 300");
        Cli.awaitTrue(bound(), "the command runs", () -> Files.exists(pid));
        long commandPid = readPids(pid).get(0);
        orphans.add(commandPid);
        holder.signal("KILL");
        holder.await(bound());
        long killedAt = System.nanoTime();
        Cli.awaitTrue(bound(), "the watchdog stopped the command",
                () -> ProcessHandle.of(commandPid).map(p -> !p.isAlive()).orElse(true));
        Cli next = run(uri(), name, List.of("--wait", "5m"), "true");
        next.assertExits(lease().plus(bound()), 0);
        // the next run's own JVM start counts against the bound too
        assertThat(Duration.ofNanos(System.nanoTime() - killedAt)).isLessThan(lease().plus(Cli.JVM_SLACK));
    }

    @Test
    @DisplayName("a latchkey run killed with -9 by its command's first act still has the command stopped: no instant after the start is unguarded")
    void runKilledAsItsCommandStartsStopsTheCommand() throws Exception {
        Path pid = dir.resolve("pid");
        // echo and kill are builtins: the kill lands microseconds after the exec, before what the JVM does once
        // its start() returned; the pid is written before the kill
        Cli holder = run(uri(), lockName(), List.of(), "sh", "-c", "echo $$ > '" + pid + "'; kill -KILL $PPID;"
                + " exec sleep 300");
        assertThat(holder.await(bound())).isEqualTo(128 + 9);
        long commandPid = readPids(pid).get(0);
        orphans.add(commandPid);
        Cli.awaitTrue(bound(), "the watchdog stopped the command",
                () -> ProcessHandle.of(commandPid).map(p -> !p.isAlive()).orElse(true));
    }

    @Test
    @DisplayName("with --permits 2, two runs hold at once on slots 0 and 1, a third exits with the conflict code, and the lock of the name stays free")
    void permitsLetNRunsAtOnce() throws Exception {
        String name = lockName();
        List<Path> slots = new ArrayList<>();
        List<Cli> runs = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Path slot = dir.resolve("slot-" + i);
            slots.add(slot);
            runs.add(run(uri(), name, List.of("--permits", "2"), "sh", "-c", "printf '%s %s %s\\n' \"$LATCHKEY_PERMIT_SLOT\""
                    + " \"$LATCHKEY_PERMITS\" \"$LATCHKEY_FENCING_TOKEN\" > '" + slot + ".tmp'; mv '" + slot + ".tmp' '" + slot
                    + "'; exec sleep 300"));
        }
        Cli.awaitTrue(bound(), "both runs hold a permit", () -> slots.stream().allMatch(Files::exists), runs);
        List<String> held = new ArrayList<>();
        for (Path slot : slots) {
            String[] fields = Files.readString(slot).trim().split(" ");
            assertThat(fields).hasSize(3);
            assertThat(fields[1]).isEqualTo("2");
            // a token, not necessarily positive: Kafka's is an offset in its token topic, from 0
            assertThat(Long.parseLong(fields[2])).isNotNegative();
            held.add(fields[0]);
        }
        assertThat(held).containsExactlyInAnyOrder("0", "1");

        Cli third = run(uri(), name, List.of("--permits", "2", "--wait", "1s"), "true");
        third.assertExits(bound(), ExitCodes.CONFLICT);
        assertThat(third.stderr()).contains("all 2 permits of semaphore '" + name + "' are held");
        // the lock of the same name is another thing in the backend
        assertThat(run(uri(), name, "true").await(bound())).isZero();
    }

    @Test
    @DisplayName("a --permits that disagrees with the holders', or below one, is one line naming the numbers, exit 2")
    void permitsMustAgree() throws Exception {
        String name = lockName();
        Path ready = dir.resolve("ready");
        run(uri(), name, List.of("--permits", "2"), "sh", "-c", "touch '" + ready + "'; exec sleep 300");
        Cli.awaitTrue(bound(), "the first run holds a permit", () -> Files.exists(ready));
        Cli other = run(uri(), name, List.of("--permits", "3"), "true");
        assertThat(other.await(bound())).as(other.stderr()).isEqualTo(ExitCodes.USAGE);
        assertThat(other.stderr()).contains("'" + name + "'", "2", "3");
        assertThat(other.stderr().lines().filter(l -> l.startsWith("latchkey:"))).hasSize(1);
        Cli zero = run(uri(), name + ":zero", List.of("--permits", "0"), "true");
        assertThat(zero.await(bound())).as(zero.stderr()).isEqualTo(ExitCodes.USAGE);
        assertThat(zero.stderr()).contains("0");
    }

    @Test
    @DisplayName("several names hold all their locks: the command gets each name and token, a run of any of them conflicts, the end frees all")
    void severalNamesHoldEveryLock() throws Exception {
        List<String> names = List.of(lockName(), lockName());
        List<String> taken = names.stream().sorted().toList();
        Path env = dir.resolve("multi-env");
        Cli holder = run(uri(), List.of(names.get(1), names.get(0)), List.of(), "sh", "-c",
                "printf '%s\\n%s\\n%s\\n%s\\n%s\\n%s\\n' \"$LATCHKEY_LOCKS\" \"$LATCHKEY_LOCK_1\" \"$LATCHKEY_FENCING_TOKEN_1\""
                        + " \"$LATCHKEY_LOCK_2\" \"$LATCHKEY_FENCING_TOKEN_2\" \"${LATCHKEY_LOCK-unset}\" > '" + env + ".tmp';"
                        + " mv '" + env + ".tmp' '" + env + "'; exec sleep 300");
        Cli.awaitTrue(bound(), "the run holds both locks", () -> Files.exists(env), List.of(holder));
        List<String> lines = Files.readAllLines(env);
        assertThat(lines.get(0)).isEqualTo("2");
        assertThat(List.of(lines.get(1), lines.get(3))).as("the names, in the order taken").isEqualTo(taken);
        // a token, not necessarily positive: Kafka's is an offset in its token topic, from 0
        assertThat(Long.parseLong(lines.get(2))).isNotNegative();
        assertThat(Long.parseLong(lines.get(4))).isNotNegative();
        assertThat(lines.get(5)).as("LATCHKEY_LOCK of a run of several names").isEqualTo("unset");

        for (String name : names) {
            Cli one = run(uri(), name, "true");
            one.assertExits(bound(), ExitCodes.CONFLICT);
            assertThat(one.stderr()).contains("lock '" + name + "' is held by someone else");
        }
        Cli both = run(uri(), names, List.of("--wait", "1s"), "true");
        both.assertExits(Duration.ofSeconds(1).plus(bound()), ExitCodes.CONFLICT);
        assertThat(both.stderr()).contains("one of the locks '" + taken.get(0) + "', '" + taken.get(1) + "' is held");

        holder.signal("TERM");
        holder.assertExits(bound(), 128 + 15);
        for (String name : names) {
            assertThat(run(uri(), name, "true").await(bound())).as("a run of %s after the multi-name run ended", name)
                    .isZero();
        }
    }

    /** Whether the backend offers read-write locks; one that does not refuses --read with the reason. */
    boolean offersReadWriteLocks() {
        return true;
    }

    @Test
    @DisplayName("--read runs of a name go at once; a --write run waits for them, holds back later readers, then runs alone")
    void readersTogetherWriterAlone() throws Exception {
        String name = lockName();
        if (!offersReadWriteLocks()) {
            Cli refused = run(uri(), name, List.of("--read"), "true");
            refused.assertExits(bound(), ExitCodes.USAGE);
            assertThat(refused.stderr()).contains("--read for '" + name + "' needs a backend with read-write locks")
                    .contains("offers no read-write locks");
            return;
        }
        List<Path> seen = new ArrayList<>();
        List<Cli> readers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Path env = dir.resolve("reader-" + i);
            seen.add(env);
            readers.add(run(uri(), name, List.of("--read"), "sh", "-c", "printf '%s %s\\n' \"$LATCHKEY_LOCK_MODE\""
                    + " \"$LATCHKEY_FENCING_TOKEN\" > '" + env + ".tmp'; mv '" + env + ".tmp' '" + env + "'; exec sleep 300"));
        }
        Cli.awaitTrue(bound(), "both --read runs hold at once", () -> seen.stream().allMatch(Files::exists), readers);
        Cli refused = run(uri(), name, List.of("--write"), "true");
        refused.assertExits(bound(), ExitCodes.CONFLICT);
        assertThat(refused.stderr()).contains("write lock '" + name + "' is held by others");
        assertThat(run(uri(), name, "true").await(bound())).as("the lock of the same name, apart from the read-write lock")
                .isZero();

        Path written = dir.resolve("writer");
        Cli writer = run(uri(), name, List.of("--write", "--wait", "5m"), "sh", "-c", "printf '%s %s\\n'"
                + " \"$LATCHKEY_LOCK_MODE\" \"$LATCHKEY_FENCING_TOKEN\" > '" + written + "'");
        // once the writer waits at the backend, a new --read run is held back though only readers hold
        Cli.awaitTrue(bound().multipliedBy(3), "a --read run is held back by the waiting writer", () -> {
            Cli probe = run(uri(), name, List.of("--read"), "true");
            try {
                return probe.await(bound()) == ExitCodes.CONFLICT && probe.stderr().contains("held back by a writer");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, List.of(writer));
        readers.get(0).signal("TERM");
        readers.get(0).assertExits(bound(), 128 + 15);
        assertThat(Files.exists(written)).as("the writer ran while the second reader held").isFalse();
        readers.get(1).signal("TERM");
        readers.get(1).assertExits(bound(), 128 + 15);
        writer.assertExits(bound(), 0);
        String[] write = Files.readString(written).trim().split(" ");
        assertThat(write[0]).isEqualTo("write");
        for (Path reader : seen) {
            String[] read = Files.readString(reader).trim().split(" ");
            assertThat(read[0]).isEqualTo("read");
            assertThat(Long.parseLong(write[1])).as("the write's token against an earlier read's")
                    .isGreaterThan(Long.parseLong(read[1]));
        }
    }

    @Test
    @DisplayName("a command that does not exist exits 127 and leaves the lock free")
    void missingCommand() throws Exception {
        String name = lockName();
        Cli cli = run(uri(), name, "no-such-command-latchkey");
        cli.assertExits(bound(), ExitCodes.NOT_FOUND);
        assertThat(cli.stderr()).contains("'no-such-command-latchkey'").contains("'" + name + "'");
        assertThat(run(uri(), name, "true").await(bound())).isZero();
    }

    @Test
    @DisplayName("a command that cannot be executed exits 126 and leaves the lock free")
    void commandThatCannotBeExecuted() throws Exception {
        String name = lockName();
        Path script = dir.resolve("not-executable.sh");
        Files.writeString(script, "#!/bin/sh\nexit 0\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rw-r--r--"));
        Cli cli = run(uri(), name, script.toString());
        cli.assertExits(bound(), ExitCodes.NOT_EXECUTABLE);
        assertThat(cli.stderr()).contains("'" + script + "'", "'" + name + "'", "permission denied");
        assertThat(run(uri(), name, "true").await(bound())).isZero();
    }

    @Test
    @DisplayName("the command reads latchkey's stdin and writes to its stdout and stderr")
    void commandInheritsTheStreams() throws Exception {
        Cli cli = run(uri(), lockName(), "sh", "-c", "read line; echo \"out:$line\"; echo \"err:$line\" >&2");
        try (OutputStream in = cli.process.getOutputStream()) {
            in.write("hello\n".getBytes(StandardCharsets.UTF_8));
        }
        cli.assertExits(bound(), 0);
        assertThat(cli.stdout()).isEqualTo("out:hello\n");
        assertThat(cli.stderr()).isEqualTo("err:hello\n");
    }

    @Test
    @DisplayName("without --verbose a run prints nothing while it waits: its one line is the conflict at the end")
    void silentWhileWaiting() throws Exception {
        String name = lockName();
        holdInBackground(name);
        Cli waiter = run(uri(), name, List.of("--wait", "2s"), "true");
        waiter.assertExits(bound().plusSeconds(2), ExitCodes.CONFLICT);
        assertThat(waiter.stdout()).isEmpty();
        assertThat(waiter.stderr().lines()).as(waiter.stderr()).hasSize(1)
                .allMatch(l -> l.contains("lock '" + name + "' is held by someone else"));
    }

    private void holdInBackground(String name) throws InterruptedException {
        Path ready = dir.resolve("holding-" + name.replace(':', '_'));
        run(uri(), name, List.of(), "sh", "-c", "touch '" + ready + "'; exec sleep 300");
        Cli.awaitTrue(bound(), "the first run holds the lock", () -> Files.exists(ready));
    }

    Cli run(String uri, String name, String... command) {
        return run(uri, name, List.of(), command);
    }

    Cli run(String uri, String name, List<String> options, String... command) {
        return run(uri, List.of(name), options, command);
    }

    Cli run(String uri, List<String> names, List<String> options, String... command) {
        List<String> args = new ArrayList<>(List.of("run", "--uri", uri));
        args.addAll(options);
        args.addAll(names);
        args.add("--");
        args.addAll(List.of(command));
        Cli cli = Cli.start(dir, Map.of(), args.toArray(String[]::new));
        started.add(cli);
        return cli;
    }

    Duration bound() {
        return lease().plus(Cli.JVM_SLACK);
    }

    static String lockName() {
        return "cli:test-" + ProcessHandle.current().pid() + "-" + LOCKS.incrementAndGet();
    }

    private static int number(String signal) {
        return switch (signal) {
            case "HUP" -> 1;
            case "INT" -> 2;
            case "TERM" -> 15;
            default -> throw new IllegalArgumentException("no number known for SIG" + signal);
        };
    }

    private static List<Long> readPids(Path file) throws IOException {
        List<Long> pids = new ArrayList<>();
        for (String s : Files.readString(file).trim().split("\\s+")) {
            pids.add(Long.parseLong(s));
        }
        return pids;
    }
}
