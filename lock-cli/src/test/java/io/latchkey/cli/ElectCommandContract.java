package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.latchkey.spi.LockUri;
import io.latchkey.testkit.fault.CuttableUri;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code latchkey elect} promises, checked with real processes against a real backend. A backend's
 * {@link RunCommandContract} test runs it as a nested class, on the same server, with that contract's
 * URIs, lease and network cut.
 *
 * <p>Every candidate runs one command, which appends {@code start TERM ID PID} and its environment to
 * a log shared by all candidates when it starts, then {@code stop TERM ID signal} when it gets SIGTERM
 * (and exits 42), or {@code stop TERM ID done} once the test created the file {@code go} (and exits 70,
 * the status of {@code run}'s lost lease: a command's own 70 must pass through, not be taken for a loss).
 * The log, written in order by processes of one machine, shows whether two commands ever ran at once.
 *
 * <p>Bounds come from the lease and the wake-up of a waiting candidate ({@link #WAKE_UP}, the
 * library's), plus {@link Cli#JVM_SLACK} where a JVM starts or a client reconnects; never from tuned
 * constants.
 */
abstract class ElectCommandContract {

    /** How soon a waiting candidate sees a lock that became free: the library's wake-up. */
    static final Duration WAKE_UP = Duration.ofMillis(250);

    private final RunCommandContract backend;
    private final List<Cli> started = new ArrayList<>();
    private CuttableUri cuttable;

    @TempDir
    Path dir;

    /** The tests of {@code backend}'s server, URIs and lease. */
    ElectCommandContract(RunCommandContract backend) {
        this.backend = backend;
    }

    @AfterEach
    void cleanUp() {
        started.forEach(Cli::close);
        if (cuttable != null) {
            cuttable.close();
        }
    }

    @Test
    @DisplayName("of three candidates one runs the command at a time, with the term and the URI in its environment;"
            + " a signal to one standing by ends it with 128+N; a command that ends by itself ends its latchkey"
            + " with its status, and another candidate runs it in a later term")
    void oneCommandAtATime() throws Exception {
        String name = RunCommandContract.lockName();
        List<String> ids = List.of("a", "b", "c");
        List<Cli> all = new ArrayList<>();
        for (String id : ids) {
            all.add(elect(backend.uri(), name, id));
        }
        Cli.awaitTrue(bound(), "one command runs, all campaign", () -> starts() == 1
                && all.stream().allMatch(c -> c.stderr().contains("campaigning in election")), all);
        // for a lease, all candidates campaign on the server, and never do two commands run at once
        long until = System.nanoTime() + backend.lease().toNanos();
        while (System.nanoTime() - until < 0) {
            assertOneAtATime(marks());
            Thread.sleep(20); // polling a file: nothing to wait on
        }
        List<String[]> before = marks();
        String running = before.get(before.size() - 1)[2];
        int signalled = running.equals("a") ? 1 : 0;
        Cli standingBy = all.get(signalled);
        standingBy.signal("INT");
        standingBy.assertExits(bound(), 128 + 2);
        assertThat(standingBy.stderr()).contains("SIGINT while standing by in election '" + name + "'");

        Files.createFile(dir.resolve("go"));
        for (Cli cli : all) {
            if (cli != standingBy) {
                cli.assertExits(bound(), ExitCodes.LOCK_LOST); // the command's own status, not a loss
            }
        }
        List<String[]> marks = marks();
        assertOneAtATime(marks);
        assertThat(marks).as("the log: %s", show(marks)).noneMatch(m -> m[2].equals(ids.get(signalled)));
        assertThat(marks.stream().filter(m -> m[0].equals("stop") && m[3].equals("done")).map(m -> m[2]))
                .as("the candidates whose command ended by itself; log: %s", show(marks))
                .containsExactlyInAnyOrderElementsOf(ids.stream().filter(id -> !id.equals(ids.get(signalled))).toList());
        for (String[] start : marks.stream().filter(m -> m[0].equals("start")).toList()) {
            assertThat(List.of(start[4], start[5], start[6], start[7])).as("LATCHKEY_ELECTION, LATCHKEY_LOCK,"
                    + " LATCHKEY_FENCING_TOKEN, LATCHKEY_URI (without its password)")
                    .containsExactly(name, name, start[1], LockUri.redact(backend.uri()));
        }
    }

    @Test
    @DisplayName("a command that does not exist ends latchkey with 127, in one line naming it and the election")
    void commandNotFound() throws Exception {
        String name = RunCommandContract.lockName();
        Cli missing = Cli.start(dir, Map.of(), "elect", "--uri", backend.uri(), name, "--", "no-such-command-latchkey");
        started.add(missing);
        missing.assertExits(bound(), ExitCodes.NOT_FOUND);
        assertThat(missing.stderr().lines()).as(missing.stderr()).singleElement().asString()
                .contains("'no-such-command-latchkey'", "election '" + name + "'", "command not found");
    }

    @Test
    @DisplayName("SIGTERM to the leader's latchkey reaches its command; it exits with the command's status,"
            + " and the other candidate leads within the lease plus the wake-up")
    void sigtermHandsOver() throws Exception {
        String name = RunCommandContract.lockName();
        Cli leader = elect(backend.uri(), name, "leader");
        Cli.awaitTrue(bound(), "the first candidate's command runs", () -> starts() == 1, List.of(leader));
        Cli standby = elect(backend.uri(), name, "standby");
        Cli.awaitTrue(bound(), "the second candidate campaigns", () -> standby.stderr().contains("campaigning"),
                List.of(standby));

        leader.signal("TERM");
        leader.assertExits(bound(), 42);
        long exited = System.nanoTime();
        Cli.awaitTrue(backend.lease().plus(WAKE_UP), "the standby's command runs", () -> starts() == 2,
                List.of(leader, standby));
        assertThat(Duration.ofNanos(System.nanoTime() - exited)).isLessThan(backend.lease().plus(WAKE_UP));
        List<String[]> marks = marks();
        assertOneAtATime(marks);
        assertThat(marks.get(1)).as("the leader's command's mark of SIGTERM").containsExactly("stop", marks.get(0)[1],
                "leader", "signal");
        assertThat(marks.get(2)[2]).isEqualTo("standby");
    }

    @Test
    @DisplayName("a command that ignores the SIGTERM forwarded to it gets SIGKILL after the grace: latchkey exits 128+9")
    void stubbornCommandIsKilledAfterTheGrace() throws Exception {
        String name = RunCommandContract.lockName();
        Duration grace = Duration.ofSeconds(1);
        Cli leader = elect(backend.uri(), name, "stubborn", false, "1s");
        Cli.awaitTrue(bound(), "the command runs", () -> starts() == 1, List.of(leader));
        long signalled = System.nanoTime();
        leader.signal("TERM");
        leader.assertExits(grace.plus(bound()), 128 + 9);
        assertThat(Duration.ofNanos(System.nanoTime() - signalled)).isGreaterThanOrEqualTo(grace);
        assertThat(marks()).as("the log").hasSize(2);
        assertThat(marks().get(1)).as("the command's mark of SIGTERM").containsExactly("stop", marks().get(0)[1],
                "stubborn", "signal");
        assertThat(leader.stderr()).contains("after SIGTERM; sent SIGKILL");
    }

    @Test
    @DisplayName("a leader cut off the network stops its command before its term ends and the other leads;"
            + " after the heal it stands by, and leads again, with a new command, when the other leaves")
    void cutLeaderStopsItsCommandAndCampaignsAgain() throws Exception {
        String name = RunCommandContract.lockName();
        cuttable = backend.newCuttableUri();
        Cli leader = elect(cuttable.uri(), name, "cut");
        Cli.awaitTrue(bound(), "the first candidate's command runs", () -> starts() == 1, List.of(leader));
        Cli standby = elect(backend.uri(), name, "standby");
        Cli.awaitTrue(bound(), "the second candidate campaigns", () -> standby.stderr().contains("campaigning"),
                List.of(standby));

        long cutAt = System.nanoTime();
        cuttable.cut();
        // the term's deadline is within the lease of the cut, less the margin: the command's SIGTERM comes then
        Cli.awaitTrue(backend.lease(), "the cut leader's command got SIGTERM", () -> marks().size() >= 2,
                List.of(leader, standby));
        Cli.awaitTrue(backend.lease().plus(WAKE_UP), "the standby's command runs", () -> starts() == 2,
                List.of(leader, standby));
        assertThat(Duration.ofNanos(System.nanoTime() - cutAt)).isLessThan(backend.lease().plus(WAKE_UP));
        assertThat(marks().get(1)).as("the cut leader's stop, before the standby's start")
                .containsExactly("stop", marks().get(0)[1], "cut", "signal");
        Cli.awaitTrue(bound(), "the cut leader campaigns again", () -> leader.stderr().contains("campaigning again"),
                List.of(leader));
        assertThat(leader.process.isAlive()).as("the cut leader's latchkey, after its term was lost").isTrue();

        cuttable.restore();
        // for a lease after the heal, the healed candidate stands by while the other leads
        long until = System.nanoTime() + backend.lease().toNanos();
        while (System.nanoTime() - until < 0) {
            assertThat(starts()).as("commands started while the other leads").isEqualTo(2);
            Thread.sleep(20); // polling a file: nothing to wait on
        }
        standby.signal("TERM");
        standby.assertExits(bound(), 42);
        // its client reconnects after the heal: as patient as a JVM's start
        Cli.awaitTrue(bound(), "the healed candidate's new command runs", () -> starts() == 3,
                List.of(leader, standby));
        List<String[]> marks = marks();
        assertOneAtATime(marks);
        assertThat(marks.get(4)[2]).isEqualTo("cut");
    }

    @Test
    @DisplayName("a leader's latchkey killed with -9: the watchdog stops its command, and the other leads within"
            + " the lease plus the wake-up")
    void killedLeaderHandsOver() throws Exception {
        String name = RunCommandContract.lockName();
        Cli leader = elect(backend.uri(), name, "killed");
        Cli.awaitTrue(bound(), "the first candidate's command runs", () -> starts() == 1, List.of(leader));
        long commandPid = Long.parseLong(marks().get(0)[3]);
        Cli standby = elect(backend.uri(), name, "standby");
        Cli.awaitTrue(bound(), "the second candidate campaigns", () -> standby.stderr().contains("campaigning"),
                List.of(standby));

        leader.signal("KILL");
        long killedAt = System.nanoTime();
        Cli.awaitTrue(bound(), "the watchdog stopped the killed leader's command",
                () -> ProcessHandle.of(commandPid).map(p -> !p.isAlive()).orElse(true));
        Cli.awaitTrue(backend.lease().plus(WAKE_UP), "the standby's command runs", () -> starts() == 2,
                List.of(leader, standby));
        assertThat(Duration.ofNanos(System.nanoTime() - killedAt)).isLessThan(backend.lease().plus(WAKE_UP));
        assertOneAtATime(marks());
    }

    @Test
    @DisplayName("latchkey leader: exit 3 before any candidate, the leader's owner and the term its command got while"
            + " it leads, exit 3 again once it resigned")
    void leaderNamesTheLeader() throws Exception {
        String name = RunCommandContract.lockName();
        Cli none = leader(name);
        none.assertExits(bound(), ExitCodes.NONE);
        assertThat(none.stdout()).isEqualTo("no leader in election '" + name + "'\n");

        String owned = backend.uri() + (backend.uri().contains("?") ? "&" : "?") + "owner=cli-node-7";
        Cli candidate = elect(owned, name, "a");
        Cli.awaitTrue(bound(), "the candidate's command runs", () -> starts() == 1, List.of(candidate));
        String term = marks().get(0)[1];
        Cli shown = leader(name);
        shown.assertExits(bound(), ExitCodes.OK);
        assertThat(shown.stdout()).as(shown.stderr()).startsWith("cli-node-7 term " + term + " (")
                .containsPattern("\\((held since|requested) \\S+Z by the (backend|holder)'s clock, client started ")
                .contains(", thread latchkey-election-");

        candidate.signal("TERM");
        candidate.assertExits(bound(), 42);
        Cli after = leader(name);
        after.assertExits(bound(), ExitCodes.NONE);
    }

    /** Runs {@code latchkey leader name} on the backend. */
    private Cli leader(String name) {
        Cli cli = Cli.start(dir, Map.of(), "leader", "--uri", backend.uri(), name);
        started.add(cli);
        return cli;
    }

    /** Starts a candidate {@code id} with {@code --verbose}, running the logging command, which exits on SIGTERM. */
    private Cli elect(String uri, String name, String id) {
        return elect(uri, name, id, true, "5s");
    }

    /** Starts a candidate {@code id} with {@code --verbose} and {@code --kill-grace grace}, running the logging command. */
    private Cli elect(String uri, String name, String id, boolean exitOnTerm, String grace) {
        Path log = dir.resolve("log");
        Path go = dir.resolve("go");
        String stop = "echo stop \"$LATCHKEY_TERM\" " + id + " >> '" + log + "'";
        String term = stop.replace(" >> ", " signal >> ");
        String script = "trap '" + term.replace("'", "'\\''") + (exitOnTerm ? "; exit 42" : "") + "' TERM;"
                + " echo start \"$LATCHKEY_TERM\" " + id + " $$ \"$LATCHKEY_ELECTION\" \"$LATCHKEY_LOCK\""
                + " \"$LATCHKEY_FENCING_TOKEN\" \"$LATCHKEY_URI\" >> '" + log + "';"
                // wait, unlike a plain sleep, is cut short by a trapped signal: the mark comes at once
                + " while [ ! -e '" + go + "' ]; do sleep 0.05 & wait $!; done; " + stop.replace(" >> ", " done >> ") + "; exit 70";
        Cli cli = Cli.start(dir, Map.of(), "elect", "--uri", uri, "--verbose", "--kill-grace", grace, name, "--", "sh",
                "-c", script);
        started.add(cli);
        return cli;
    }

    /** The log's lines, split at spaces. */
    private List<String[]> marks() {
        Path log = dir.resolve("log");
        try {
            return Files.exists(log) ? Files.readAllLines(log).stream().map(l -> l.split(" ")).toList() : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private long starts() {
        return marks().stream().filter(m -> m[0].equals("start")).count();
    }

    /** Each start follows the stop of the command before it, and each term is above the one before. */
    private static void assertOneAtATime(List<String[]> marks) {
        String[] running = null;
        long lastTerm = Long.MIN_VALUE;
        for (String[] m : marks) {
            String line = String.join(" ", m);
            if (m[0].equals("start")) {
                if (running != null) {
                    fail("'" + line + "' while '" + String.join(" ", running) + "' still ran; log: " + show(marks));
                }
                long term = Long.parseLong(m[1]);
                assertThat(term).as("the term of '%s' against the one before; log: %s", line, show(marks))
                        .isGreaterThan(lastTerm);
                lastTerm = term;
                running = m;
            } else {
                assertThat(running).as("a start before '%s'; log: %s", line, show(marks)).isNotNull();
                assertThat(m[1] + " " + m[2]).as("the stop's term and candidate").isEqualTo(running[1] + " " + running[2]);
                running = null;
            }
        }
    }

    private static String show(List<String[]> marks) {
        return marks.stream().map(m -> String.join(" ", m)).toList().toString();
    }

    private Duration bound() {
        return backend.bound();
    }
}
