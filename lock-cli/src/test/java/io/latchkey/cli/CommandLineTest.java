package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.spi.LockUri;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What picocli users expect of {@code latchkey}, and one line and one code for each bad input. No backend needed. */
@DisplayName("latchkey's command line")
class CommandLineTest {

    private static final Duration BOUND = Cli.JVM_SLACK;

    @TempDir
    Path dir;

    @Test
    @DisplayName("--help, help run, --version and generate-completion work")
    void helpVersionCompletion() throws Exception {
        Cli help = Cli.start(dir, "--help");
        assertThat(help.await(BOUND)).isZero();
        assertThat(help.stdout()).contains("run", "demo", "server", "generate-completion", "Exit status");
        Cli helpRun = Cli.start(dir, "help", "run");
        assertThat(helpRun.await(BOUND)).isZero();
        assertThat(helpRun.stdout()).contains("NAME [NAME...] -- COMMAND", "--wait", "--kill-grace", "--conflict-exit-code");
        Cli version = Cli.start(dir, "--version");
        assertThat(version.await(BOUND)).isZero();
        assertThat(version.stdout()).startsWith("latchkey ").doesNotContain("unknown");
        Cli completion = Cli.start(dir, "generate-completion");
        assertThat(completion.await(BOUND)).isZero();
        assertThat(completion.stdout()).contains("complete -F");
    }

    @Test
    @DisplayName("latchkey server zookeeper prints a URI that latchkey run uses, and SIGINT stops it and removes its data")
    void embeddedZooKeeperServer() throws Exception {
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        // the server's data directory is a temporary one: under this test's own, to see it removed
        Map<String, String> env = Map.of("JAVA_TOOL_OPTIONS", "-Djava.io.tmpdir=" + tmp);
        try (Cli server = Cli.start(dir, env, "server", "zookeeper", "--port", "0")) {
            servesAndStops(server, tmp);
        }
    }

    private void servesAndStops(Cli server, Path tmp) throws Exception {
        Pattern use = Pattern.compile("use: export LATCHKEY_URI='([^']+)'");
        Cli.awaitTrue(BOUND, "the server prints its URI", () -> use.matcher(server.stdout()).find(), List.of(server));
        Matcher m = use.matcher(server.stdout());
        assertThat(m.find()).isTrue();
        String uri = m.group(1);
        assertThat(dataDirectories(tmp)).as("the server's data directory while it runs").hasSize(1);

        Cli run = Cli.start(dir, Map.of(Backends.URI_VARIABLE, uri), "run", "report:nightly", "--", "sh", "-c",
                "echo token $LATCHKEY_FENCING_TOKEN");
        assertThat(run.await(BOUND)).as(run.stderr()).isZero();
        assertThat(run.stdout()).matches("token \\d+\\n");

        server.signal("INT");
        assertThat(server.await(BOUND)).isEqualTo(128 + 2);
        assertThat(server.stdout()).contains("zookeeper stopped; its data is removed");
        assertThat(dataDirectories(tmp)).as("the stopped server's data directory").isEmpty();
    }

    /** The embedded server's data directories in {@code tmp} (other libraries may put files there too). */
    private static List<Path> dataDirectories(Path tmp) throws IOException {
        try (Stream<Path> entries = Files.list(tmp)) {
            return entries.filter(p -> p.getFileName().toString().startsWith("latchkey-zookeeper-")).toList();
        }
    }

    @Test
    @DisplayName("without --uri or LATCHKEY_URI, one line shows an example URI per backend, exit 2")
    void noBackend() throws Exception {
        Cli cli = Cli.start(dir, "run", "job", "--", "true");
        assertThat(cli.await(BOUND)).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.stderr().lines()).singleElement().asString()
                .contains("LATCHKEY_URI", "redis://", "zookeeper://", "etcd://", "kafka://", "postgresql://", "mariadb://",
                        "mysql://");
    }

    @Test
    @DisplayName("a missing '--' or command, a bad duration, a bad URI, an unknown backend: one line, exit 2")
    void badInput() throws Exception {
        assertUsage(Cli.start(dir, Map.of(Backends.URI_VARIABLE, "zookeeper://127.0.0.1:1"), "run", "job", "true"),
                "missing '--'");
        assertUsage(Cli.start(dir, Map.of(Backends.URI_VARIABLE, "zookeeper://127.0.0.1:1"), "run", "job", "--"),
                "missing command");
        assertUsage(Cli.start(dir, "run", "--uri", "zookeeper://127.0.0.1:1", "--wait", "5 minutes", "job", "--", "true"),
                "bad duration '5 minutes'");
        assertUsage(Cli.start(dir, "run", "--uri", "zookeeper://127.0.0.1:99999", "job", "--", "true"),
                "bad port '99999'");
        assertUsage(Cli.start(dir, "run", "--uri", "mongodb://localhost", "job", "--", "true"),
                "unknown backend 'mongodb'");
        assertUsage(Cli.start(dir, "run", "--uri", "zookeeper://127.0.0.1:1?lease=soon", "job", "--", "true"),
                "'soon'");
        // names and permits are checked before connecting: the backend here is down, and not blamed
        assertUsage(Cli.start(dir, "run", "--uri", "redis://127.0.0.1:1?timeout=1s", "job\u0007", "--", "true"),
                "must not contain control characters: U+0007");
        assertUsage(Cli.start(dir, "run", "--uri", "redis://127.0.0.1:1?timeout=1s", "--permits", "0", "job", "--", "true"),
                "semaphore 'job' must have 1 to 1000 permits, got 0");
        assertUsage(Cli.start(dir, "run", "--uri", "redis://127.0.0.1:1?timeout=1s", "--permits", "2", "a", "b", "--", "true"),
                "--permits 2 takes one semaphore name, and 2 were given ('a', 'b')");
        assertUsage(Cli.start(dir, "run", "--uri", "redis://127.0.0.1:1?timeout=1s", "--read", "--write", "dim", "--", "true"),
                "--read and --write exclude each other: a run of 'dim'");
        assertUsage(Cli.start(dir, "run", "--uri", "redis://127.0.0.1:1?timeout=1s", "--read", "a", "b", "--", "true"),
                "--read takes the read-write lock of one name, without --permits, and got 2 names [a, b]");
        assertUsage(Cli.start(dir, "run", "--uri", "redis://127.0.0.1:1?timeout=1s", "--write", "--permits", "3", "dim", "--",
                "true"), "--write takes the read-write lock of one name, without --permits, and got --permits 3");
        assertUsage(Cli.start(dir, "run", "--uri", "redis://127.0.0.1:1?timeout=1s", "a", "b", "a", "--", "true"),
                "names lock 'a' twice");
    }

    @Test
    @DisplayName("latchkey elect: help, and a missing '--' or command, a second name, a bad name or duration: one line, exit 2")
    void electUsage() throws Exception {
        Cli help = Cli.start(dir, "help", "elect");
        assertThat(help.await(BOUND)).isZero();
        assertThat(help.stdout()).contains("NAME -- COMMAND", "--kill-grace", "LATCHKEY_TERM");
        String down = "redis://127.0.0.1:1?timeout=1s"; // checked before connecting: the server is down, and not blamed
        assertUsage(Cli.start(dir, "elect", "--uri", down, "leader", "true"), "missing '--' before the command to run"
                + " while leading election 'leader'");
        assertUsage(Cli.start(dir, "elect", "--uri", down, "leader", "--"), "missing command after '--' for election 'leader'");
        assertUsage(Cli.start(dir, "elect", "--uri", down, "a", "b", "--", "true"),
                "latchkey elect takes one election name before the '--', and got 2: 'a', 'b'");
        assertUsage(Cli.start(dir, "elect", "--uri", down, "leader\u0007", "--", "true"),
                "bad election name: lock name must not contain control characters: U+0007");
        assertUsage(Cli.start(dir, "elect", "--uri", down, "", "--", "true"), "bad election name: lock name must not be empty");
        assertUsage(Cli.start(dir, "elect", "--uri", down, "--kill-grace", "soon", "leader", "--", "true"), "'soon'");
    }

    @Test
    @DisplayName("a backend that cannot be reached is exit 69 and one line of latchkey's own, on every backend, for run"
            + " and for elect")
    void unreachableBackend() throws Exception {
        for (String uri : new String[] {"zookeeper://127.0.0.1:1?timeout=1s", "redis://127.0.0.1:1?timeout=1s",
                "etcd://127.0.0.1:1?timeout=1s", "kafka://127.0.0.1:1?timeout=1s",
                "postgresql://app:secret@127.0.0.1:1/app?timeout=1s", "mariadb://app:secret@127.0.0.1:1/app?timeout=1s"}) {
            Cli cli = Cli.start(dir, "run", "--uri", uri, "job", "--", "true");
            assertThat(cli.await(BOUND)).as(uri).isEqualTo(ExitCodes.BACKEND_UNAVAILABLE);
            assertThat(cli.stderr()).as(uri).contains(uri.substring(0, uri.indexOf(':'))).doesNotContain("secret");
            // without --verbose the libraries' own logging (Curator, Redisson, gRPC, Kafka) stays off stderr
            assertThat(cli.stderr().lines().filter(l -> !l.isBlank())).as(uri)
                    .singleElement().asString().startsWith("latchkey: ");
        }
        Cli elect = Cli.start(dir, "elect", "--uri", "redis://127.0.0.1:1?timeout=1s", "leader", "--", "true");
        assertThat(elect.await(BOUND)).as(elect.stderr()).isEqualTo(ExitCodes.BACKEND_UNAVAILABLE);
        assertThat(elect.stderr().lines().filter(l -> !l.isBlank())).singleElement().asString().startsWith("latchkey: ");
        Cli leader = Cli.start(dir, "leader", "--uri", "redis://127.0.0.1:1?timeout=1s", "feed");
        assertThat(leader.await(BOUND)).as(leader.stderr()).isEqualTo(ExitCodes.BACKEND_UNAVAILABLE);
        assertThat(leader.stderr().lines().filter(l -> !l.isBlank())).singleElement().asString().startsWith("latchkey: ");
    }

    @Test
    @DisplayName("latchkey leader and status: their help, bad input in one line with exit 2 before connecting, and"
            + " 69 for a backend that cannot be reached")
    void leaderAndStatusUsage() throws Exception {
        Cli help = Cli.start(dir, "help", "leader");
        assertThat(help.await(BOUND)).isZero();
        assertThat(help.stdout()).contains("latchkey leader [OPTIONS] NAME", "3 no candidate leads");
        String down = "redis://127.0.0.1:1?timeout=1s"; // checked before connecting: the server is down, and not blamed
        assertUsage(Cli.start(dir, "leader", "--uri", down, "feed\u0007"),
                "bad election name: lock name must not contain control characters: U+0007");
        assertUsage(Cli.start(dir, "leader", "--uri", down, "a", "b"), "'b'");
        assertUsage(Cli.start(dir, "leader", "--uri", down + "&owner=%20", "feed"), "owner must not be blank");
        Cli statusHelp = Cli.start(dir, "help", "status");
        assertThat(statusHelp.await(BOUND)).isZero();
        assertThat(statusHelp.stdout()).contains("latchkey status [OPTIONS] NAME", "3 it is free");
        assertUsage(Cli.start(dir, "status", "--uri", down, ""), "bad lock name: lock name must not be empty");
        assertUsage(Cli.start(dir, "status", "--uri", down, "--permits", "0", "spark:warehouse"),
                "bad semaphore: semaphore 'spark:warehouse' must have 1 to 1000 permits, got 0 (--permits)");
        Cli unreachable = Cli.start(dir, "status", "--uri", down, "report:nightly");
        assertThat(unreachable.await(BOUND)).as(unreachable.stderr()).isEqualTo(ExitCodes.BACKEND_UNAVAILABLE);
    }

    @Test
    @DisplayName("list and release: usage, a bad prefix, limit or name, and release without --force are exit 2 before"
            + " connecting; an unreachable backend is 69")
    void listAndReleaseUsage() throws Exception {
        String down = "redis://127.0.0.1:1?timeout=1s";
        Cli help = Cli.start(dir, "help", "release");
        assertThat(help.await(BOUND)).isZero();
        assertThat(help.stdout()).contains("latchkey release --force [--yes] [OPTIONS] NAME", "3 the lock was free");
        assertUsage(Cli.start(dir, "release", "--uri", down, "report:nightly"),
                "release of lock 'report:nightly' needs --force");
        assertUsage(Cli.start(dir, "release", "--force", "--uri", down, "feed\u0007"),
                "bad lock name: lock name must not contain control characters: U+0007");
        assertUsage(Cli.start(dir, "list", "--uri", down, "--limit", "0"), "--limit must be 1 to 10000, got 0");
        assertUsage(Cli.start(dir, "list", "--uri", down, "feed\u0007"), "bad prefix: lock name must not contain");
        Cli unreachable = Cli.start(dir, "list", "--uri", down, "report:");
        assertThat(unreachable.await(BOUND)).as(unreachable.stderr()).isEqualTo(ExitCodes.BACKEND_UNAVAILABLE);
    }

    @Test
    @DisplayName("the URI handed to the command has no password")
    void redaction() {
        assertThat(LockUri.redact("redis://user:s3cret@host:6379/0?lease=5s")).isEqualTo("redis://user:****@host:6379/0?lease=5s");
        assertThat(LockUri.redact("zookeeper://zk1:2181/latchkey")).isEqualTo("zookeeper://zk1:2181/latchkey");
    }

    private static void assertUsage(Cli cli, String message) throws InterruptedException {
        assertThat(cli.await(BOUND)).as(cli.stderr()).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.stderr()).contains(message);
        assertThat(cli.stderr().lines().filter(l -> l.startsWith("latchkey:"))).hasSize(1);
    }
}
