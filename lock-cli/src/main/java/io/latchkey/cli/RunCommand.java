package io.latchkey.cli;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.spi.LockUri;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code latchkey run NAME -- COMMAND [ARGS...]}: takes the lock, runs the command while the lease is
 * valid, releases the lock when the command ends.
 *
 * <p>Guarantees: the command starts only with a valid lease and gets its fencing token; when the lease
 * is lost, the command and every process it started get SIGTERM at once and, if still alive after
 * {@code --kill-grace}, SIGKILL, so no process of the command runs without a valid lease for longer
 * than the grace. SIGTERM, SIGINT and SIGHUP end a wait at once; while the command runs they are
 * forwarded to it. If {@code latchkey run} itself is killed with SIGKILL, a watchdog process stops the
 * command (SIGTERM, then SIGKILL after the grace; the command's own children are its business then),
 * and the lock expires after the {@code lease} option.
 *
 * <p>{@code --permits N} runs the command under one permit of the semaphore {@code NAME} of {@code N}
 * permits instead of the lock, with the same guarantees for that permit; {@code --permits 1}, the
 * default, is the lock itself, as {@code consul lock -n 1} is. A semaphore and a lock of one name are
 * independent in the backend, so every run of a name must give the same {@code --permits}: another
 * number above one is refused naming both (exit 2); a run with {@code --permits 1} does not exclude
 * the semaphore's holders.
 *
 * <p>Several names before the {@code --} run the command under the locks of all of them, a multi-lock
 * taken all or none ({@link RunTarget}); the guarantees hold for the whole, which is lost with the
 * first of its locks. {@code --permits} takes one name.
 *
 * <p>{@code --read} and {@code --write} run the command under the read or the write lock of the
 * read-write lock {@code NAME} (one name, no {@code --permits}); a backend without read-write locks is a
 * usage error that says why (exit 2).
 *
 * <p>The command's start, its stop on a loss, the forwarding of signals and the watchdog are
 * {@link GuardedCommand}'s, and where a signal goes, to the command or to a wait, {@link SignalRelay}'s;
 * both are shared with {@code latchkey elect}.
 *
 * <p>One instance per invocation, used by the main thread and the signal and loss threads.
 */
@Command(name = "run", mixinStandardHelpOptions = true, sortOptions = false,
        customSynopsis = "latchkey run [OPTIONS] NAME [NAME...] -- COMMAND [ARGS...]",
        description = {"Run COMMAND while holding the lock NAME; release it when COMMAND ends.",
            "",
            "COMMAND inherits stdin, stdout and stderr and gets LATCHKEY_LOCK, LATCHKEY_FENCING_TOKEN and"
                + " LATCHKEY_URI (without its password) in its environment. If the lease is lost, COMMAND and"
                + " everything it started get SIGTERM, then SIGKILL after --kill-grace. SIGTERM, SIGINT and"
                + " SIGHUP end a wait at once, and are forwarded to COMMAND while it runs.",
            "",
            "With --permits N (above 1), up to N runs of NAME go at once: each holds one permit of the semaphore"
                + " NAME and gets LATCHKEY_PERMIT_SLOT (0 to N-1) and LATCHKEY_PERMITS; its fencing token is per slot.",
            "",
            "With --read, COMMAND runs holding the read lock of the read-write lock NAME, beside other --read runs of"
                + " NAME; with --write, holding its write lock, alone. Either adds LATCHKEY_LOCK_MODE (read or write).",
            "",
            "With several names before the '--', COMMAND runs holding all their locks, taken all or none in one"
                + " order whatever order they are given in; it gets LATCHKEY_LOCKS (how many), and LATCHKEY_LOCK_i and"
                + " LATCHKEY_FENCING_TOKEN_i for i from 1, in that order, instead of LATCHKEY_LOCK and LATCHKEY_FENCING_TOKEN."},
        footerHeading = "%nExamples:%n",
        footer = {"  latchkey run --uri zookeeper://zk1:2181/latchkey report:nightly -- ./report.sh",
            "  export LATCHKEY_URI='redis://localhost:6379?lease=15s'",
            "  latchkey run --wait 30s etl -- spark-submit job.py",
            "  latchkey run --permits 3 --wait 10m spark:warehouse -- spark-submit load.py",
            "  latchkey run --wait 5m table:orders table:customers -- ./rewrite-both.sh",
            "  latchkey run --read --wait 5m table:dim -- ./report-from-dim.sh",
            "  latchkey run --write --wait 30m table:dim -- ./rebuild-dim.sh",
            "  latchkey run --uri 'postgresql://app:secret@db1:5432/app?lease=30s' migrate -- ./migrate.sh",
            "",
            "Exit status: COMMAND's own; 128+N if it died of signal N; 75 (--conflict-exit-code)",
            "if the lock is held; 70 if the lease was lost; 127 command not found; 126 not",
            "executable; 69 backend unreachable; 2 bad input; 128+N if signal N ended the wait."})
final class RunCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock's name, for example report:nightly;"
            + " several names before the '--' hold all their locks at once.")
    String name;

    @Parameters(index = "1..*", arity = "0..*", paramLabel = "COMMAND",
            description = "Further lock names, then '--', the command and its arguments.")
    List<String> command;

    @Option(names = "--uri", paramLabel = "URI",
            description = "The backend, for example zookeeper://zk1:2181/latchkey?lease=15s. Default: $LATCHKEY_URI.")
    String uri;

    @Option(names = "--wait", paramLabel = "DURATION", defaultValue = "0s", converter = DurationConverter.class,
            description = "How long to wait for a held lock (default: ${DEFAULT-VALUE}: skip the run at once).")
    Duration wait;

    @Option(names = "--conflict-exit-code", paramLabel = "N", defaultValue = "" + ExitCodes.CONFLICT,
            description = "The exit status when the lock stays held (default: ${DEFAULT-VALUE}).")
    int conflictExitCode;

    @Option(names = "--kill-grace", paramLabel = "DURATION", defaultValue = "10s", converter = DurationConverter.class,
            description = "After a lost lease, how long SIGTERM has before SIGKILL (default: ${DEFAULT-VALUE}).")
    Duration killGrace;

    @Option(names = "--permits", paramLabel = "N", defaultValue = "1",
            description = "Run while holding one of N permits of the semaphore NAME, so that up to N runs go at once"
                    + " (default: ${DEFAULT-VALUE}: the lock NAME). Every run of NAME must give the same N.")
    int permits;

    @Option(names = "--read", description = "Run while holding the read lock of the read-write lock NAME: --read runs"
            + " of NAME go at once, never beside a --write run, and wait behind a --write run that waits.")
    boolean read;

    @Option(names = "--write", description = "Run while holding the write lock of the read-write lock NAME, beside no"
            + " other --read or --write run of NAME. The read-write lock is apart from the lock NAME.")
    boolean write;

    @Spec
    CommandSpec spec;

    private final PrintStream err = System.err;
    private SignalRelay signals;
    private boolean verbose;
    private RunTarget target;      // set by checkCommand, first thing in call()

    @Override
    public Integer call() {
        checkCommand();
        if (conflictExitCode < 0 || conflictExitCode > 255) {
            throw new CliException(ExitCodes.USAGE, "--conflict-exit-code must be between 0 and 255: " + conflictExitCode);
        }
        checkNameAndPermits();
        verbose = Main.verboseRequested(spec.commandLine().getParseResult().originalArgs().toArray(String[]::new));
        // a signal is the command's to handle: the lock stays held until it ends, with no SIGKILL of ours
        signals = SignalRelay.install(err, false, "waiting for " + subject(), "the command was not run");

        LockClient client;
        try {
            client = Backends.connect(uri);
        } catch (RuntimeException e) {
            Integer stopped = signals.stoppedWhileIdle();
            if (stopped != null) {
                return stopped;
            }
            throw e;
        }
        try {
            return lockAndRun(client);
        } finally {
            Thread.interrupted(); // an interrupt that ended the wait must not break the release
            try {
                client.close();
            } catch (LockException e) {
                err.println("latchkey: " + e.getMessage());
            }
        }
    }

    private int lockAndRun(LockClient client) {
        Optional<Lease> maybe;
        try {
            if (verbose) {
                err.println("latchkey: waiting up to " + DurationConverter.format(wait) + " for " + subject());
            }
            maybe = target.acquire(client, wait);
        } catch (InterruptedException e) {
            Integer stopped = signals.stoppedWhileIdle();
            return stopped != null ? stopped : ExitCodes.FAILURE;
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, e.getMessage());
        } catch (UnsupportedOperationException e) {
            throw new CliException(ExitCodes.USAGE, target.unsupported(e.getMessage()));
        } catch (LockException e) {
            Integer stopped = signals.stoppedWhileIdle();
            if (stopped != null) {
                return stopped;
            }
            throw new CliException(ExitCodes.BACKEND_UNAVAILABLE, e.getMessage());
        }
        if (maybe.isEmpty()) {
            Integer stopped = signals.stoppedWhileIdle();
            if (stopped != null) {
                return stopped;
            }
            err.println("latchkey: " + target.heldByOthers() + "; gave up after waiting " + DurationConverter.format(wait) + " (use --wait to wait longer)");
            return conflictExitCode;
        }
        Lease lease = maybe.get();
        try {
            return runUnder(lease);
        } finally {
            release(lease);
        }
    }

    /** A release that does not reach the backend is one line: the lock expires there, the exit status stands. */
    private void release(Lease lease) {
        try {
            lease.close();
        } catch (LockException e) {
            err.println("latchkey: " + e.getMessage() + "; the command's exit status stands");
        }
    }

    private int runUnder(Lease lease) {
        if (verbose) {
            err.println("latchkey: acquired " + target.acquired(lease) + ", valid for " + lease.remaining().toMillis() + " ms unless renewed");
        }
        Map<String, String> env = new HashMap<>();
        target.describe(lease, env);
        env.put(Backends.URI_VARIABLE, LockUri.redact(Backends.chosen(uri)));
        GuardedCommand run = new GuardedCommand(command, env, killGrace, subject(), "the lock is released", err);
        OptionalInt notStarted = signals.start(run);
        if (notStarted.isPresent()) {
            return notStarted.getAsInt();
        }
        return run.await(GuardedCommand.Grant.of(lease));
    }

    /** What messages speak of: {@code lock 'a'}, {@code semaphore 'a'} or {@code locks 'a', 'b'}. */
    private String subject() {
        return target.subject();
    }

    /** Bad names and permits are usage errors found before any backend is reached, not backend failures. */
    private void checkNameAndPermits() {
        try {
            target.check();
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, e.getMessage());
        }
    }

    private RunTarget.Mode mode() {
        if (read && write) {
            throw new CliException(ExitCodes.USAGE, "--read and --write exclude each other: a run of '" + name
                    + "' holds its read-write lock in one mode; give one of them");
        }
        return read ? RunTarget.Mode.READ : write ? RunTarget.Mode.WRITE : RunTarget.Mode.LOCK;
    }

    /**
     * Splits the words after the options at the {@code --}: the lock names before it, the command after
     * it, so that the command's own options are never taken for ours.
     */
    private void checkCommand() {
        List<String> args = spec.commandLine().getParseResult().originalArgs();
        int dash = args.indexOf("--");
        String usage = "write it as: latchkey run [options] NAME [NAME...] -- COMMAND [ARGS...]";
        List<String> words = command == null ? List.of() : command;
        if (dash < 0) {
            target = new RunTarget(List.of(name), permits, mode());
            throw new CliException(ExitCodes.USAGE, "missing '--' before the command to run under " + subject() + "; "
                    + usage);
        }
        int moreNames = Math.max(0, words.size() - (args.size() - dash - 1));
        List<String> names = new ArrayList<>(List.of(name));
        names.addAll(words.subList(0, moreNames));
        target = new RunTarget(names, permits, mode());
        command = List.copyOf(words.subList(moreNames, words.size()));
        if (command.isEmpty()) {
            throw new CliException(ExitCodes.USAGE, "missing command after '--' for " + subject() + "; " + usage);
        }
    }
}
