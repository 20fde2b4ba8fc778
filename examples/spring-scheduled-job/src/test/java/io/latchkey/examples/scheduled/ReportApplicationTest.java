package io.latchkey.examples.scheduled;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockClient;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

class ReportApplicationTest {

    @Test
    void startsAgainstARealZooKeeperAndRunsTheJobUnderTheLock() throws InterruptedException {
        try (ZooKeeperServer zookeeper = ZooKeeperServer.start();
                // arguments, as on a command line: they override application.properties
                ConfigurableApplicationContext context = new SpringApplicationBuilder(ReportApplication.class)
                        .run("--latchkey.uri=" + zookeeper.uri(zookeeper.endpoints()), "--report.cron=* * * * * *")) {
            assertThat(context.getBean(LockClient.class).backendName()).isEqualTo("zookeeper");
            ReportJob job = context.getBean(ReportJob.class);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (job.runs() == 0) {
                assertThat(System.nanoTime() - deadline).as("a run within 30s").isNegative();
                Thread.sleep(50);
            }
        }
    }
}
