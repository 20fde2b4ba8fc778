package io.latchkey.cli;

import io.latchkey.LockState;
import java.io.PrintStream;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code latchkey leader NAME}: prints who leads the election {@code NAME} now, as the backend records
 * it, for an operator or a script; it does not campaign and changes nothing.
 *
 * <p>Decisions:
 * <ul>
 *   <li>The first word printed is the leader's owner id, the rest of the line its term and where it runs,
 *       so that a script compares {@code $(latchkey leader feed | cut -d' ' -f1)} with a host's owner id.
 *       An owner id with spaces in it is the application's choice, and shows whole in the rest of the
 *       line.</li>
 *   <li>No leader is exit 3, with one line on stdout that says so: not an error (69 and 2 are), but a
 *       state a script branches on without parsing, as {@code systemctl is-active} answers 3.</li>
 *   <li>A holder of the election's lock that is no candidate (a {@code latchkey run} of the same name)
 *       leads as far as the backend is concerned: it keeps every candidate from leading, so it is shown.</li>
 * </ul>
 */
@Command(name = "leader", mixinStandardHelpOptions = true, sortOptions = false,
        customSynopsis = "latchkey leader [OPTIONS] NAME",
        description = {"Print who leads the election NAME now: its owner id (the first word), its term, when its"
                + " client started and the thread that won the term. Read-only: it does not campaign."},
        footerHeading = "%nExamples:%n",
        footer = {"  latchkey leader --uri etcd://etcd1:2379 feed",
            "  [ \"$(latchkey leader feed | cut -d' ' -f1)\" = \"$(hostname):1234\" ]",
            "",
            "Exit status: 0 a leader was printed; 3 no candidate leads; 69 backend",
            "unreachable; 2 bad input."})
final class LeaderCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "NAME", description = "The election's name.")
    String name;

    @Option(names = "--uri", paramLabel = "URI",
            description = "The backend, for example zookeeper://zk1:2181/latchkey. Default: $LATCHKEY_URI.")
    String uri;

    private final PrintStream out = System.out;

    @Override
    public Integer call() throws InterruptedException {
        LockState state = HolderLines.read(uri, name, "election");
        if (!state.isHeld()) {
            out.println("no leader in election '" + name + "'");
            return ExitCodes.NONE;
        }
        out.println(HolderLines.holder(state, "term"));
        return ExitCodes.OK;
    }
}
