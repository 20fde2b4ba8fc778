package io.latchkey.cli;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockState;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.Charset;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code latchkey release --force NAME}: ends the current grant of a lock on the backend, whoever holds
 * it ({@link io.latchkey.DistributedLock#forceRelease()}), for a holder that hangs while it still renews.
 *
 * <p>Decisions: {@code --force} is required, as the only release there is of another's grant (a run
 * releases its own lock by ending); on a terminal it shows the holder and asks, unless {@code --yes}, and
 * anything but {@code y} or {@code yes} leaves the lock alone (exit 1); without a terminal there is
 * nobody to ask, and it goes ahead, as {@code kubectl delete} does. It prints the grant it ended; a free
 * lock is exit 3, as for {@code status}.
 */
@Command(name = "release", mixinStandardHelpOptions = true, sortOptions = false,
        customSynopsis = "latchkey release --force [--yes] [OPTIONS] NAME",
        description = {"End the current grant of the lock NAME on the backend, whoever holds it. The holder learns it"
                + " as a loss at its next check of the grant, within its lease (a latchkey run stops its command), and the next grant's"
                + " fencing token is higher, so a resource that checks tokens refuses the old holder."},
        footerHeading = "%nExamples:%n",
        footer = {"  latchkey release --force --uri redis://redis1:6379 report:nightly",
            "",
            "Exit status: 0 a grant was ended; 3 the lock was free; 1 not confirmed;",
            "69 backend unreachable; 2 bad input or no --force."})
final class ReleaseCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock's name.")
    String name;

    @Option(names = "--force", description = "Required: end another's grant.")
    boolean force;

    @Option(names = {"-y", "--yes"}, description = "Do not ask on a terminal.")
    boolean yes;

    @Option(names = "--uri", paramLabel = "URI",
            description = "The backend, for example etcd://etcd1:2379. Default: $LATCHKEY_URI.")
    String uri;

    private final PrintStream out = System.out;

    @Override
    public Integer call() throws InterruptedException {
        if (!force) {
            throw new CliException(ExitCodes.USAGE, "release of lock '" + name + "' needs --force: it ends whoever's"
                    + " grant is current, and a run releases its own lock by ending; add --force if that is meant");
        }
        try {
            LockClient.checkName(name);
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, "bad lock name: " + e.getMessage());
        }
        try (LockClient client = Backends.connect(uri)) {
            if (!yes && System.console() != null) {
                LockState now = client.lock(name).inspect();
                if (!now.isHeld()) {
                    out.println(name + ": free, nothing to release");
                    return ExitCodes.NONE;
                }
                out.print(name + ": held by " + HolderLines.holder(now, "token") + "\nEnd this grant? [y/N] ");
                out.flush();
                if (!confirmed()) {
                    System.err.println("latchkey: lock '" + name + "' left as it is: not confirmed");
                    return ExitCodes.FAILURE;
                }
            }
            LockState ended = client.lock(name).forceRelease();
            if (!ended.isHeld()) {
                out.println(name + ": free, nothing to release");
                return ExitCodes.NONE;
            }
            out.println(name + ": ended the grant of " + HolderLines.holder(ended, "token"));
            return ExitCodes.OK;
        } catch (LockBackendUnavailableException e) {
            throw new CliException(ExitCodes.BACKEND_UNAVAILABLE, e.getMessage());
        } catch (UnsupportedOperationException | LockException e) {
            throw new CliException(ExitCodes.FAILURE, e.getMessage());
        }
    }

    private static boolean confirmed() {
        try {
            String answer = new BufferedReader(new InputStreamReader(System.in, Charset.defaultCharset())).readLine();
            return answer != null && (answer.strip().toLowerCase(Locale.ROOT).equals("y")
                    || answer.strip().toLowerCase(Locale.ROOT).equals("yes"));
        } catch (IOException e) {
            return false;
        }
    }
}
