package io.latchkey.examples.scheduled;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Holder;
import io.latchkey.LockClient;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

class ReportApplicationTest {

    /** The lease the tests give the instances, shorter than application.properties' so that a hand-over is quick. */
    private static final Duration LEASE = Duration.ofSeconds(2);
    /** Far beyond any step of these tests on a loaded machine; never reached when they pass. */
    private static final Duration PATIENT = Duration.ofSeconds(30);

    @Test
    void startsAgainstARealZooKeeperAndRunsTheJobUnderTheLock() throws InterruptedException {
        try (ZooKeeperServer zookeeper = ZooKeeperServer.start();
                ConfigurableApplicationContext context = instance(zookeeper, 1)) {
            assertThat(context.getBean(LockClient.class).backendName()).isEqualTo("zookeeper");
            ReportJob job = context.getBean(ReportJob.class);
            await("a run of the job", () -> job.runs() > 0);
        }
    }

    /**
     * Two instances: the first publishes, the second stands by and sees the first as the leader; once the
     * first closes, the second publishes in a higher term, within the lease plus a wake-up.
     */
    @Test
    void onePublisherAtATimeAndTheStandbyTakesOver() throws InterruptedException {
        try (ZooKeeperServer zookeeper = ZooKeeperServer.start();
                ConfigurableApplicationContext first = instance(zookeeper, 1)) {
            ReportPublisher leader = first.getBean(ReportPublisher.class);
            await("instance 1 publishes alone", leader::isRunning);
            long firstTerm = leader.term();
            ConfigurableApplicationContext second = instance(zookeeper, 2);
            try {
                assertThat(second.getBean(ReportPublisher.class).isRunning()).as("the standby's publisher").isFalse();
                assertThat(second.getBean(LockClient.class).election("report:publisher").leader().map(Holder::owner))
                        .as("the leader, as the standby sees it").hasValue("report-instance-1");
                long closing = System.nanoTime();
                first.close();
                await("instance 2 publishes", () -> second.getBean(ReportPublisher.class).isRunning());
                assertThat(Duration.ofNanos(System.nanoTime() - closing)).as("the hand-over")
                        .isLessThan(LEASE.plus(Duration.ofSeconds(1)));
                assertThat(second.getBean(ReportPublisher.class).term()).as("the next term").isGreaterThan(firstTerm);
            } finally {
                second.close();
            }
        }
    }

    /** Instance {@code n}, on a command line's arguments, which override application.properties. */
    private static ConfigurableApplicationContext instance(ZooKeeperServer zookeeper, int n) {
        return new SpringApplicationBuilder(ReportApplication.class).run("--latchkey.uri=" + zookeeper.uri(zookeeper.endpoints()),
                "--latchkey.lease=" + LEASE.toMillis() + "ms", "--latchkey.timeout=1s", "--latchkey.owner=report-instance-" + n,
                "--report.instance=" + n, "--report.cron=* * * * * *");
    }

    private static void await(String what, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + PATIENT.toNanos();
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as(what + " within " + PATIENT).isNegative();
            Thread.sleep(50);
        }
    }
}
