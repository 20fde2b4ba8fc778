package io.latchkey.cli;

import io.latchkey.Candidacy;
import io.latchkey.Election;
import io.latchkey.ElectionListener;
import io.latchkey.Leadership;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.Revocation;
import io.latchkey.spi.LockUri;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.LinkedBlockingQueue;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import sun.misc.Signal;

/**
 * {@code latchkey elect NAME -- COMMAND [ARGS...]}: campaigns in the election {@code NAME} and runs the
 * command while this node leads, anew in each term, until the command ends by itself.
 *
 * <p>Guarantees: the command starts only in a valid term and gets its number ({@code LATCHKEY_TERM},
 * the term's fencing token). When the term is lost (a network cut, a pause, the server's restart), the
 * command and every process it started get SIGTERM no later than the term's validity deadline and, if
 * still alive after {@code --kill-grace}, SIGKILL, exactly as {@code latchkey run} stops a command
 * whose lease is lost ({@link GuardedCommand}); latchkey then campaigns again and starts the command
 * anew in its next term, only once the stopped one has ended.
 *
 * <p>Decisions:
 * <ul>
 *   <li>A command that ends by itself while leading ends latchkey: the term is resigned (the lock
 *       released, so that a standby takes over within a round trip instead of a lease) and latchkey
 *       exits with the command's status, 128+N if it died of signal N. This is what {@code consul lock}
 *       and {@code etcdctl lock} do with their command, and a leader's job that ends, fails or succeeds,
 *       is one for whatever runs latchkey (systemd, a supervisor, a loop) to judge and restart; a latchkey
 *       that restarted it on its own would hide a crash loop. A command that cannot start (127, 126)
 *       ends latchkey the same way.</li>
 *   <li>SIGTERM, SIGINT and SIGHUP while the command runs are forwarded to it; if it is still alive
 *       after {@code --kill-grace}, its tree gets SIGKILL. Once it ended the term is resigned, and
 *       latchkey exits with the command's status, as {@code latchkey run} does. While standing by (no
 *       term, or between terms) the signal ends latchkey at once with 128+N.</li>
 *   <li>A term lost is no end: there is no exit status 70 as with {@code run}, the loss is one line on
 *       stderr and the campaign goes on, as a candidacy's does after a lost term.</li>
 *   <li>A backend that cannot be reached at the start is exit 69; once campaigning, an outage is waited
 *       out by the candidacy, which tries again by itself.</li>
 *   <li>If latchkey itself is killed with SIGKILL, the watchdog of {@link GuardedCommand} stops the
 *       command (SIGTERM, then SIGKILL after the grace), and the term's lock expires within the lease.</li>
 * </ul>
 *
 * <p>Where a signal goes, to the command of the term or to the wait for one, is {@link SignalRelay}'s,
 * shared with {@code latchkey run}.
 *
 * <p>The command gets {@code LATCHKEY_ELECTION} and {@code LATCHKEY_TERM}, and also
 * {@code LATCHKEY_LOCK} and {@code LATCHKEY_FENCING_TOKEN} (the election's lock and the same number) so
 * that a command written for {@code latchkey run} works unchanged, and {@code LATCHKEY_URI} without its
 * password.
 *
 * <p>One instance per invocation, used by the main thread, the candidacy's thread and the signal and
 * loss threads.
 */
@Command(name = "elect", mixinStandardHelpOptions = true, sortOptions = false,
        customSynopsis = "latchkey elect [OPTIONS] NAME -- COMMAND [ARGS...]",
        description = {"Campaign in the election NAME and run COMMAND while this node leads; campaign again and"
                + " start COMMAND anew if a term is lost.",
            "",
            "COMMAND inherits stdin, stdout and stderr and gets LATCHKEY_ELECTION, LATCHKEY_TERM (the term's number,"
                + " a fencing token), LATCHKEY_LOCK, LATCHKEY_FENCING_TOKEN (the same number) and LATCHKEY_URI (without"
                + " its password) in its environment. If the term is lost, COMMAND and everything it started get"
                + " SIGTERM, then SIGKILL after --kill-grace, and latchkey campaigns again. When COMMAND ends by itself,"
                + " latchkey resigns the term and exits with COMMAND's status. SIGTERM, SIGINT and SIGHUP are forwarded"
                + " to COMMAND (SIGKILL after --kill-grace), or end latchkey at once while it stands by."},
        footerHeading = "%nExamples:%n",
        footer = {"  latchkey elect --uri 'etcd://etcd1:2379?lease=10s' feed -- ./consume.sh",
            "  latchkey elect --kill-grace 30s scheduler -- java -jar scheduler.jar",
            "",
            "Exit status: COMMAND's own once it ends by itself or after a forwarded signal;",
            "128+N if it died of signal N or signal N came while standing by; 127 command",
            "not found; 126 not executable; 69 backend unreachable; 2 bad input."})
final class ElectCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "NAME", description = "The election's name, for example feed-consumer:"
            + " the name of the lock its leader holds.")
    String name;

    @Parameters(index = "1..*", arity = "0..*", paramLabel = "COMMAND",
            description = "'--', then the command and its arguments.")
    List<String> command;

    @Option(names = "--uri", paramLabel = "URI",
            description = "The backend, for example zookeeper://zk1:2181/latchkey?lease=15s. Default: $LATCHKEY_URI.")
    String uri;

    @Option(names = "--kill-grace", paramLabel = "DURATION", defaultValue = "10s", converter = DurationConverter.class,
            description = "After a lost term or a signal, how long COMMAND has before SIGKILL (default: ${DEFAULT-VALUE}).")
    Duration killGrace;

    @Spec
    CommandSpec spec;

    private final PrintStream err = System.err;
    /** The terms won, in order, from the candidacy's thread to the main thread. */
    private final BlockingQueue<Leadership> terms = new LinkedBlockingQueue<>();
    private SignalRelay signals;
    private boolean verbose;

    @Override
    public Integer call() {
        checkCommand();
        try {
            LockClient.checkName(name);
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, "bad election name: " + e.getMessage());
        }
        verbose = Main.verboseRequested(spec.commandLine().getParseResult().originalArgs().toArray(String[]::new));
        // a signal to a leader is a hand-over a standby waits for: a command that ignores it gets SIGKILL
        signals = SignalRelay.install(err, true, "standing by in election '" + name + "'",
                "left the election without running the command");

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
            Election election = client.election(name);
            if (verbose) {
                err.println("latchkey: campaigning in election '" + name + "'");
            }
            Candidacy candidacy = election.campaign(new Listener());
            try {
                return leadEachTerm();
            } finally {
                Thread.interrupted(); // a signal's interrupt must not cut short the wait for the resignation
                candidacy.close(); // resigns a term it still holds: a standby takes over within a round trip
            }
        } finally {
            Thread.interrupted(); // an interrupt that ended the wait must not break the client's close
            try {
                client.close();
            } catch (LockException e) {
                err.println("latchkey: " + e.getMessage());
            }
        }
    }

    /** Runs the command in each term won, until it ends by itself or a signal ends latchkey. */
    private int leadEachTerm() {
        while (true) {
            Leadership term;
            try {
                term = terms.take();
            } catch (InterruptedException e) {
                Integer stopped = signals.stoppedWhileIdle();
                return stopped != null ? stopped : ExitCodes.FAILURE;
            }
            if (!term.isValid()) {
                continue; // it ended before its command could start; the candidacy campaigns again
            }
            int status = runIn(term);
            GuardedCommand ran = signals.ended();
            if (ran == null || !ran.stoppedOnLoss()) {
                return status; // the command ended by itself (or after a signal), or never started
            }
            Signal signal = signals.forwarded();
            if (signal != null) {
                return ExitCodes.SIGNAL_BASE + signal.getNumber(); // lost, then asked to stop while it stopped
            }
            err.println("latchkey: the command of term " + term.term() + " has stopped; campaigning again in election '"
                    + name + "'");
        }
    }

    /**
     * The command's status, or the status latchkey ends with if the command could not start or a signal
     * came first; if the term was lost and the command stopped, {@link GuardedCommand#stoppedOnLoss()} of
     * {@link SignalRelay#ended()} says so.
     */
    private int runIn(Leadership term) {
        String subject = "term " + term.term() + " of election '" + name + "'";
        if (verbose) {
            err.println("latchkey: elected for " + subject + ", valid for " + term.remaining().toMillis()
                    + " ms unless renewed");
        }
        String number = Long.toString(term.term());
        Map<String, String> env = Map.of("LATCHKEY_ELECTION", name, "LATCHKEY_TERM", number, "LATCHKEY_LOCK", name,
                "LATCHKEY_FENCING_TOKEN", number, Backends.URI_VARIABLE, LockUri.redact(Backends.chosen(uri)));
        GuardedCommand run = new GuardedCommand(command, env, killGrace, subject, "the term is resigned", err);
        OptionalInt notStarted = signals.start(run);
        if (notStarted.isPresent()) {
            return notStarted.getAsInt();
        }
        return run.await(GuardedCommand.Grant.of(term));
    }

    /** Splits the words after the options at the {@code --}: one name before it, the command after it. */
    private void checkCommand() {
        List<String> args = spec.commandLine().getParseResult().originalArgs();
        int dash = args.indexOf("--");
        String usage = "write it as: latchkey elect [options] NAME -- COMMAND [ARGS...]";
        List<String> words = command == null ? List.of() : command;
        if (dash < 0) {
            throw new CliException(ExitCodes.USAGE, "missing '--' before the command to run while leading election '"
                    + name + "'; " + usage);
        }
        int moreNames = Math.max(0, words.size() - (args.size() - dash - 1));
        if (moreNames > 0) {
            throw new CliException(ExitCodes.USAGE, "latchkey elect takes one election name before the '--', and got "
                    + (moreNames + 1) + ": '" + name + "', '" + String.join("', '", words.subList(0, moreNames))
                    + "'; " + usage);
        }
        command = List.copyOf(words);
        if (command.isEmpty()) {
            throw new CliException(ExitCodes.USAGE, "missing command after '--' for election '" + name + "'; " + usage);
        }
    }

    /** Hands each term won to the main thread; says each end with --verbose. Returns at once. */
    private final class Listener implements ElectionListener {

        @Override
        public void elected(Leadership leadership) {
            terms.add(leadership);
        }

        @Override
        public void revoked(Leadership leadership, Revocation why) {
            if (verbose) {
                err.println("latchkey: term " + leadership.term() + " of election '" + name + "' ended: " + why);
            }
        }
    }
}
