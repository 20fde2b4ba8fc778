package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.fault.ChildJvm;
import io.latchkey.testkit.fault.OptionsUri;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the package javadoc promises for {@code atLeast} when the holder's process exits early: ZooKeeper
 * has no expiry of its own for one node, so the lock is free before {@code atLeast} — at once when the
 * client was closed, within {@code lease} when the process exited without closing it.
 */
class ZooKeeperAtLeastExitTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(3))
            .timeout(Duration.ofSeconds(1)).build();
    private static final Duration AT_LEAST = OPTIONS.lease().multipliedBy(5);
    private static final Duration SLACK = OPTIONS.timeout().dividedBy(2);
    private static final Duration WAKE_UP = Duration.ofMillis(250);

    @RegisterExtension
    static final SharedServer<ZooKeeperServer> ZOOKEEPER = SharedServer.of(ZooKeeperBackendTest.SERVER_KEY,
            ZooKeeperServer::start);

    @Test
    @DisplayName("atLeast, holder closes its client and exits early: the lock is free within timeout of the exit,"
            + " long before atLeast")
    void closedClientFreesAtOnce() throws Exception {
        Duration freeAfterExit = runAndExit("close");
        assertThat(freeAfterExit).isLessThanOrEqualTo(OPTIONS.timeout().plus(SLACK));
    }

    @Test
    @DisplayName("atLeast, holder exits without closing its client: the lock is free within lease of the exit,"
            + " before atLeast")
    void exitWithoutCloseFreesWithinLease() throws Exception {
        Duration freeAfterExit = runAndExit("exit");
        assertThat(freeAfterExit).isLessThanOrEqualTo(OPTIONS.lease().plus(WAKE_UP).plus(SLACK));
    }

    /** The time from the child's exit until a waiter here got the lock; checks it was held until the exit. */
    private static Duration runAndExit(String mode) throws Exception {
        ZooKeeperServer server = ZOOKEEPER.get();
        String name = "at-least-" + mode + "-" + System.nanoTime();
        String uri = OptionsUri.of(server.uri(server.endpoints()), OPTIONS);
        List<String> command = ChildJvm.command();
        command.addAll(List.of("-Xmx256m", "-cp", System.getProperty("java.class.path"), AtLeastChildMain.class.getName(),
                uri, name, Long.toString(AT_LEAST.toMillis()), mode));
        Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try (LockClient waiter = LockClient.connect(URI.create(server.uri(server.endpoints())), OPTIONS)) {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            assertThat(out.readLine()).as("the child's task").isEqualTo("ran");
            long ranAt = System.nanoTime();
            assertThat(waiter.lock(name).tryLock()).as("the lock within atLeast, the child alive").isEmpty();
            CompletableFuture<Optional<Lease>> next = waiter.lock(name).tryLockAsync(AT_LEAST.multipliedBy(2));
            OutputStream in = child.getOutputStream();
            in.write("go\n".getBytes(StandardCharsets.UTF_8));
            in.flush();
            assertThat(child.waitFor(OPTIONS.lease().toMillis(), TimeUnit.MILLISECONDS)).as("the child exited").isTrue();
            long exitedAt = System.nanoTime();
            Lease lease = next.get(AT_LEAST.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
            long grantedAt = System.nanoTime();
            lease.close();
            assertThat(Duration.ofNanos(grantedAt - ranAt)).as("granted before atLeast ran out").isLessThan(AT_LEAST);
            Duration free = Duration.ofNanos(grantedAt - exitedAt);
            System.err.println("atLeast " + AT_LEAST + ", holder " + mode + ": lock free " + free + " after the exit");
            return free;
        } finally {
            child.destroyForcibly();
        }
    }
}
