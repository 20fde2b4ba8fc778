package io.latchkey.cli;

import io.latchkey.LockState;
import java.io.PrintStream;
import java.util.List;
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
 * status}'s "not running"), as {@code latchkey leader} with no leader. Since when it is held is shown as
 * the backend or the holder recorded it, and says which ({@link io.latchkey.GrantTime.Source}).
 *
 * <p>{@code --permits N} reads the semaphore {@code NAME} of {@code N} permits, the one {@code latchkey run
 * --permits N} holds: a first line {@code NAME: <k> of <N> permits held}, then one line per slot in the
 * lock's words. Exit 0 if any permit is held, else 3; another number than the backend's is bad input
 * (exit 2), as for {@code run}. {@code --permits 1} is the lock, as for {@code run}.
 */
@Command(name = "status", mixinStandardHelpOptions = true, sortOptions = false,
        customSynopsis = "latchkey status [OPTIONS] NAME",
        description = {"Print who holds the lock NAME now, as the backend records it: the holder's owner id, the"
                + " fencing token, since when it is held, when its client started, the thread that acquired, how long"
                + " the backend keeps it if the holder goes silent, and how many wait for it. Read-only.",
            "With --permits N, print each permit slot of the semaphore NAME of N permits the same way."},
        footerHeading = "%nExamples:%n",
        footer = {"  latchkey status --uri redis://redis1:6379 report:nightly",
            "  latchkey status --uri redis://redis1:6379 --permits 3 spark:warehouse",
            "",
            "Exit status: 0 the lock (a permit) is held; 3 it is free (none is); 69 backend unreachable;",
            "2 bad input."})
final class StatusCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock's name.")
    String name;

    @Option(names = "--uri", paramLabel = "URI",
            description = "The backend, for example etcd://etcd1:2379. Default: $LATCHKEY_URI.")
    String uri;

    @Option(names = "--permits", paramLabel = "N",
            description = "NAME is the semaphore of N permits that 'latchkey run --permits N' holds: print each permit"
                    + " slot's holder. 1 (the default) is the lock NAME.")
    int permits = 1;

    private final PrintStream out = System.out;

    @Override
    public Integer call() throws InterruptedException {
        if (permits != 1) {
            return slots();
        }
        LockState state = HolderLines.read(uri, name, "lock");
        if (!state.isHeld()) {
            out.println(name + ": free");
            return ExitCodes.NONE;
        }
        out.println(name + ": held by " + HolderLines.holder(state, "token"));
        return ExitCodes.OK;
    }

    /** {@code NAME: <k> of <n> permits held}, then one line per slot. */
    private int slots() throws InterruptedException {
        List<LockState> slots = HolderLines.readSlots(uri, name, permits);
        long held = slots.stream().filter(LockState::isHeld).count();
        out.println(name + ": " + held + " of " + permits + " permits held");
        for (int slot = 0; slot < slots.size(); slot++) {
            LockState s = slots.get(slot);
            out.println("  slot " + slot + ": " + (s.isHeld() ? "held by " + HolderLines.holder(s, "token") : "free"));
        }
        return held > 0 ? ExitCodes.OK : ExitCodes.NONE;
    }
}
