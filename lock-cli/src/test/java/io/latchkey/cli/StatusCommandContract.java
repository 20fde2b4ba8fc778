package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code latchkey status} promises, checked with real processes against a real backend; a backend's
 * {@link RunCommandContract} test runs it as a nested class, on the same server and with its URIs.
 */
abstract class StatusCommandContract {

    private final RunCommandContract backend;
    private final List<Cli> started = new ArrayList<>();

    @TempDir
    Path dir;

    StatusCommandContract(RunCommandContract backend) {
        this.backend = backend;
    }

    @AfterEach
    void cleanUp() {
        started.forEach(Cli::close);
    }

    @Test
    @DisplayName("latchkey status: exit 3 and 'free' before the lock is taken, the holder's owner and the token its"
            + " command got while a run holds it, exit 3 again once the run ended")
    void statusNamesTheHolder() throws Exception {
        String name = RunCommandContract.lockName();
        Cli free = status(name);
        free.assertExits(backend.bound(), ExitCodes.NONE);
        assertThat(free.stdout()).isEqualTo(name + ": free\n");

        Path token = dir.resolve("token");
        Cli run = runHolding(name, "cli-status-7", token);
        Cli held = status(name);
        held.assertExits(backend.bound(), ExitCodes.OK);
        assertThat(held.stdout()).as(held.stderr()).startsWith(name + ": held by cli-status-7 token "
                + Files.readString(token).strip() + " (").contains(", thread main").endsWith(", 0 waiting)\n")
                .containsPattern(" \\((held since|requested) \\S+Z by the (backend|holder)'s clock, client started ");

        run.signal("TERM");
        run.assertExits(backend.bound(), 128 + 15);
        status(name).assertExits(backend.bound(), ExitCodes.NONE);
    }

    @Test
    @DisplayName("latchkey status --permits 3: exit 3 and '0 of 3 permits held' with three free slots before a run, the"
            + " run's owner and token on the slot its command got while it holds a permit, exit 3 again once it ended")
    void statusReadsEachSlotOfASemaphore() throws Exception {
        String name = RunCommandContract.lockName();
        Cli none = slots(name);
        none.assertExits(backend.bound(), ExitCodes.NONE);
        assertThat(none.stdout()).as(none.stderr())
                .isEqualTo(name + ": 0 of 3 permits held\n  slot 0: free\n  slot 1: free\n  slot 2: free\n");

        Path slot = dir.resolve("slot");
        Cli run = runHolding(name, "cli-slots-2", slot, "--permits", "3");
        String[] held = Files.readString(slot).strip().split(" "); // slot, token
        Cli one = slots(name);
        one.assertExits(backend.bound(), ExitCodes.OK);
        assertThat(one.stdout()).as(one.stderr()).startsWith(name + ": 1 of 3 permits held\n").hasLineCount(4)
                .contains("\n  slot " + held[0] + ": held by cli-slots-2 token " + held[1] + " (");

        run.signal("TERM");
        run.assertExits(backend.bound(), 128 + 15);
        slots(name).assertExits(backend.bound(), ExitCodes.NONE);
    }

    private Cli slots(String name) {
        return cli("status", "--uri", backend.uri(), "--permits", "3", name);
    }

    @Test
    @DisplayName("latchkey list names a run's lock under its prefix with its owner and token, as a line and as JSON;"
            + " latchkey release --force ends that grant and prints it, the run stops its command and exits 70 within the"
            + " lease, and the lock is free: a second release is exit 3 and the list is empty")
    void listAndForceRelease() throws Exception {
        String prefix = RunCommandContract.lockName() + "/";
        String name = prefix + "a";
        Path token = dir.resolve("token");
        Cli run = runHolding(name, "cli-list-1", token);
        String t = Files.readString(token).strip();

        Cli list = cli("list", "--uri", backend.uri(), prefix);
        list.assertExits(backend.bound(), ExitCodes.OK);
        assertThat(list.stdout()).as(list.stderr()).startsWith(name + ": held by cli-list-1 token " + t + " (")
                .hasLineCount(1);
        Cli json = cli("list", "--json", "--uri", backend.uri(), prefix);
        json.assertExits(backend.bound(), ExitCodes.OK);
        assertThat(json.stdout()).as(json.stderr()).startsWith("[{\"name\":\"" + name + "\",\"owner\":\"cli-list-1\"")
                .contains(",\"token\":" + t, ",\"waiters\":0").containsPattern(",\"since\":\"[^\"]+Z\",\"sinceSource\":\"[A-Z_]+\"");

        Cli release = cli("release", "--force", "--uri", backend.uri(), name);
        release.assertExits(backend.bound(), ExitCodes.OK);
        assertThat(release.stdout()).as(release.stderr()).startsWith(name + ": ended the grant of cli-list-1 token " + t);
        run.assertExits(backend.lease().plus(backend.bound()), ExitCodes.LOCK_LOST);
        cli("release", "--force", "--uri", backend.uri(), name).assertExits(backend.bound(), ExitCodes.NONE);
        Cli empty = cli("list", "--uri", backend.uri(), prefix);
        empty.assertExits(backend.bound(), ExitCodes.OK);
        assertThat(empty.stdout()).isEmpty();
    }

    /**
     * A {@code latchkey run} of {@code name} by {@code owner}, once its command wrote its token to {@code token}
     * (with {@code --permits}, its slot and its token).
     */
    private Cli runHolding(String name, String owner, Path token, String... options) throws InterruptedException {
        String owned = backend.uri() + (backend.uri().contains("?") ? "&" : "?") + "owner=" + owner;
        List<String> args = new ArrayList<>(List.of("run", "--uri", owned));
        args.addAll(List.of(options));
        args.addAll(List.of(name, "--", "sh", "-c", "echo $LATCHKEY_PERMIT_SLOT \"$LATCHKEY_FENCING_TOKEN\" > '" + token
                + ".tmp'; mv '" + token + ".tmp' '" + token + "'; exec sleep 300"));
        Cli run = Cli.start(dir, Map.of(), args.toArray(String[]::new));
        started.add(run);
        Cli.awaitTrue(backend.bound(), "the run's command holds the lock", () -> Files.exists(token), List.of(run));
        return run;
    }

    private Cli cli(String... args) {
        Cli cli = Cli.start(dir, Map.of(), args);
        started.add(cli);
        return cli;
    }

    private Cli status(String name) {
        Cli cli = Cli.start(dir, Map.of(), "status", "--uri", backend.uri(), name);
        started.add(cli);
        return cli;
    }
}
