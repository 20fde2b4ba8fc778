package io.latchkey.cli;

import io.latchkey.LockState;
import java.io.PrintStream;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code latchkey status NAME}: the first question when a job did not run, "who holds it?", answered
 * from the backend in one line: the holder's owner id, its fencing token, when its client started, the
 * thread that acquired, how long the backend keeps the grant if the holder goes silent, and how many
 * requests wait behind it. Read-only.
 *
 * <p>Decisions: the line begins with the name, then {@code held by} and the owner, so that it reads as a
 * sentence and a script finds the owner as the fourth word; a free lock is exit 3 ({@code systemctl
 * status}'s "not running"), as {@code latchkey leader} with no leader. The grant's own time is not
 * shown: no backend records it for another client to read yet.
 */
@Command(name = "status", mixinStandardHelpOptions = true, sortOptions = false,
        customSynopsis = "latchkey status [OPTIONS] NAME",
        description = {"Print who holds the lock NAME now, as the backend records it: the holder's owner id, the"
                + " fencing token, when its client started, the thread that acquired, how long the backend keeps"
                + " it if the holder goes silent, and how many wait for it. Read-only."},
        footerHeading = "%nExamples:%n",
        footer = {"  latchkey status --uri redis://redis1:6379 report:nightly",
            "",
            "Exit status: 0 the lock is held; 3 it is free; 69 backend unreachable;",
            "2 bad input."})
final class StatusCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock's name.")
    String name;

    @Option(names = "--uri", paramLabel = "URI",
            description = "The backend, for example etcd://etcd1:2379. Default: $LATCHKEY_URI.")
    String uri;

    private final PrintStream out = System.out;

    @Override
    public Integer call() throws InterruptedException {
        LockState state = HolderLines.read(uri, name, "lock");
        if (!state.isHeld()) {
            out.println(name + ": free");
            return ExitCodes.NONE;
        }
        out.println(name + ": held by " + HolderLines.holder(state, "token"));
        return ExitCodes.OK;
    }
}
