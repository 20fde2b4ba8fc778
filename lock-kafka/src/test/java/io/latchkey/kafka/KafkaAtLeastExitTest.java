package io.latchkey.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.kafka.KafkaServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the package javadoc says of {@code atLeast} when the holder's process exits early: Kafka has no
 * expiry that could keep the lock, so the holder's group membership ends with its session (the lease
 * minus a heartbeat) whether the process exits or is killed, and another client gets the lock then,
 * long before {@code atLeast}.
 */
class KafkaAtLeastExitTest {

    private static final Duration LEASE = Duration.ofSeconds(6);
    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final Duration AT_LEAST = LEASE.multipliedBy(5);

    @RegisterExtension
    static final SharedServer<KafkaServer> KAFKA = SharedServer.of(KafkaLockTest.SERVER_KEY, KafkaServer::start);

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"exit", "kill"})
    @DisplayName("a holder whose process ends before atLeast (exit without close, or kill -9) frees the lock within the lease, before atLeast")
    void processEndingEarlyFreesTheLockWithinTheLease(String how) throws Exception {
        String uri = KAFKA.get().uri(KAFKA.get().endpoints()) + "?lease=" + LEASE.toSeconds() + "s";
        String name = "at-least-exit:" + how + ":" + Long.toHexString(ThreadLocalRandom.current().nextLong());
        Process child = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "-Dlatchkey.testkit.kafka.libs=unused",
                AtLeastChild.class.getName(), uri, name, AT_LEAST.toString()))
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try (LockClient client = LockClient.connect(uri)) {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String line = out.readLine();
            assertThat(line).as("the child's report").startsWith("ran ");
            long childToken = Long.parseLong(line.substring(4).trim());
            long grantedAt = System.nanoTime(); // the child's grant was earlier still

            long endedAt;
            if (how.equals("exit")) {
                try (OutputStream in = child.getOutputStream()) {
                    in.write("exit\n".getBytes(StandardCharsets.UTF_8));
                }
                assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("the child exited").isTrue();
                endedAt = System.nanoTime();
            } else {
                child.destroyForcibly(); // SIGKILL
                child.waitFor(30, TimeUnit.SECONDS);
                endedAt = System.nanoTime();
            }
            Optional<Lease> next = client.lock(name).tryLock(AT_LEAST);
            long nextAt = System.nanoTime();

            assertThat(next).as("the lock after the holder's process ended").isPresent();
            try (Lease lease = next.get()) {
                assertThat(lease.fencingToken()).isGreaterThan(childToken);
            }
            Duration slack = TIMEOUT.dividedBy(2);
            assertThat(Duration.ofNanos(nextAt - endedAt)).as("from the end of the holder's process to the next grant")
                    .isLessThanOrEqualTo(LEASE.plus(slack));
            assertThat(Duration.ofNanos(nextAt - grantedAt)).as("the lock was not kept for atLeast (%s)", AT_LEAST)
                    .isLessThan(AT_LEAST);
        } finally {
            child.destroyForcibly();
        }
    }
}
