package io.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.redis.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code latchkey demo} as a user runs it, shortened: a real embedded ZooKeeper and real worker processes. */
@DisplayName("latchkey demo")
class DemoCommandTest {

    @TempDir
    Path dir;

    @Test
    @DisplayName("a short demo survives its three faults with zero overlapping leases and at least one failover")
    void shortDemo() throws Exception {
        Duration duration = Duration.ofSeconds(25);
        Cli demo = Cli.start(dir, "demo", "--duration", "25s");
        // the faults may run past the duration on a slow machine: each waits at most 3 leases plus 15 s
        int status = demo.await(duration.plus(Duration.ofSeconds(3 * (9 + 15))));
        String out = demo.stdout();
        assertThat(status).as(out + demo.stderr()).isZero();
        // each lease from its grant to the earliest of lost(), its release and the latest deadline it claimed
        assertThat(number(out, "overlapping valid leases")).as(out).isZero();
        // shown apart from overlaps, and not bounded here: a loss with no fault is no breach of mutual exclusion
        assertThat(number(out, "spurious losses")).as(out).isNotNegative();
        assertThat(number(out, "failovers")).as(out).isGreaterThanOrEqualTo(1);
        assertThat(number(out, "stale writes refused")).as(out).isGreaterThanOrEqualTo(1);
        assertThat(out).contains("tokens increase with grants  yes").doesNotContain("\033[");
        // what latchkey status reads from the backend, before the kill and after the failover: a worker by name
        assertThat(out).containsPattern("latchkey status report:nightly: held by worker-\\d+ token \\d+");
    }

    @Test
    @DisplayName("demo --uri plays the kill and the stop on a backend in a container, with zero overlapping leases")
    void demoOnAGivenBackend() throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            String uri = redis.uri(redis.endpoints()) + "?lease=3s&timeout=1s";
            Cli demo = Cli.start(dir, "demo", "--duration", "25s", "--uri", uri);
            int status = demo.await(Duration.ofSeconds(25 + 2 * (9 + 15)));
            String out = demo.stdout();
            assertThat(status).as(out + demo.stderr()).isZero();
            assertThat(out).contains("fault 3/3 skipped");
            assertThat(number(out, "overlapping valid leases")).as(out).isZero();
            assertThat(number(out, "failovers")).as(out).isGreaterThanOrEqualTo(1);
            assertThat(number(out, "stale writes refused")).as(out).isGreaterThanOrEqualTo(1);
            assertThat(out).contains("tokens increase with grants  yes")
                    .containsPattern("latchkey status report:nightly: held by worker-\\d+ token \\d+");
        }
    }

    private static long number(String out, String label) {
        Matcher m = Pattern.compile("^\\s+" + Pattern.quote(label) + "\\s+(\\d+)", Pattern.MULTILINE).matcher(out);
        assertThat(m.find()).as("a line '" + label + "' in:\n" + out).isTrue();
        return Long.parseLong(m.group(1));
    }
}
