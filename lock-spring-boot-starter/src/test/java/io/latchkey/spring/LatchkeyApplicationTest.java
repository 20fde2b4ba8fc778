package io.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockClient;
import io.latchkey.micrometer.LatchkeyMetrics;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.redis.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * An application as a user writes it, {@code @EnableAutoConfiguration} with the starter, Actuator and
 * Micrometer on the class path, on the Boot line of the test run (3.5 here, 4 in lock-spring-boot4-test):
 * the starter's list of auto-configurations gives the client of {@code latchkey.*}, a
 * {@code @DistributedLocked} method under its lock, the line's own health indicator with its details, the
 * endpoint, and the lock metrics in the application's registry. A real Redis.
 */
class LatchkeyApplicationTest {

    @RegisterExtension
    static final SharedServer<RedisServer> REDIS = SharedServer.of("redis", RedisServer::start);

    /** Far beyond the client's event delivery on a loaded machine; never reached when the test passes. */
    private static final Duration PATIENCE = Duration.ofSeconds(15);

    @Test
    void theStartersAutoConfigurationsWorkOnThisBootLine() throws Exception {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class).properties(
                "spring.main.web-application-type=none", "spring.main.banner-mode=off",
                "latchkey.uri=" + REDIS.get().uri(REDIS.get().endpoints()), "latchkey.lease=4s", "latchkey.timeout=1s",
                "latchkey.owner=app-on-" + (BootLine.BOOT_4 ? "boot4" : "boot3"),
                "management.endpoints.web.exposure.include=health,latchkey").run()) {
            LockClient client = context.getBean(LockClient.class);
            assertThat(client.backendName()).isEqualTo("redis");
            assertThat(client.options().lease()).isEqualTo(Duration.ofSeconds(4));

            Job job = context.getBean(Job.class);
            assertThat(job.run()).as("the method ran under its lock").isTrue();

            assertThat(context.getBean(LatchkeyMetrics.class)).isNotNull();
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            long deadline = System.nanoTime() + PATIENCE.toNanos();
            // events reach the binder on the client's event thread
            while (registry.find("latchkey.hold").timer() == null
                    || registry.find("latchkey.hold").timer().count() == 0) {
                assertThat(System.nanoTime() - deadline).as("latchkey.hold recorded within " + PATIENCE).isNegative();
                Thread.sleep(20);
            }
            // the job's lock, before the health check takes its own
            assertThat(registry.get("latchkey.acquire").tag("outcome", "acquired").tag("backend", "redis").timer()
                    .count()).isEqualTo(1);

            BootLine.Health health = BootLine.health(context);
            assertThat(health.status()).isEqualTo("UP");
            assertThat(health.details()).containsEntry("backend", "redis").containsEntry("lock", "latchkey:health")
                    .containsEntry("leasesHeld", 0L).containsEntry("acquired", true);
            // by the beans' types: a class of the other line does not load here
            assertThat(Stream.of(context.getBeanDefinitionNames()).map(context::getType)
                    .filter(t -> t != null && t.getName().startsWith("io.latchkey.")
                            && t.getName().endsWith("HealthIndicator"))
                    .map(Class::getSimpleName)).as("one health indicator, the line's own")
                    .containsExactly(BootLine.BOOT_4 ? "LatchkeyHealthIndicator" : "LatchkeyBoot3HealthIndicator");

            LatchkeyEndpoint endpoint = context.getBean(LatchkeyEndpoint.class);
            assertThat(endpoint.leases()).containsEntry("backend", "redis").containsEntry("held", List.of());
            assertThat(endpoint.lock("job:app")).isEqualTo(Map.of("name", "job:app", "held", false));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class App {
        @Bean
        Job job(LockClient client) {
            return new Job(client);
        }
    }

    static class Job {
        private final LockClient client;

        Job(LockClient client) {
            this.client = client;
        }

        @DistributedLocked(name = "job:app")
        public boolean run() {
            return LockedCall.current().isPresent() && client.lock("job:app").isHeldByCurrentThread();
        }
    }
}
