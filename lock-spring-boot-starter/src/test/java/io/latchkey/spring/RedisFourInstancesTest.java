package io.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.testkit.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/** The four-instance contract on Redis, plus once per slot, which lock-redis records. */
class RedisFourInstancesTest extends FourInstancesContract {

    private static RedisServer redis;

    @BeforeAll
    static void startServer() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopServer() {
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    String uri() {
        return redis.uri(redis.endpoints());
    }

    @Test
    void withOncePerSlotEachCronSlotRunsExactlyOnce() {
        startFour(CronSlotApp.class);
        await("5 slots run", () -> SLOT_RUNS.size() >= 5);
        assertEachSlotOnceWithoutGaps(Duration.ofSeconds(1));
    }

    @Test
    void withOncePerSlotEachFixedRateSlotRunsExactlyOnce() {
        startFour(RateSlotApp.class);
        await("15 slots run", () -> SLOT_RUNS.size() >= 15);
        assertEachSlotOnceWithoutGaps(PERIOD);
    }

    private static void assertEachSlotOnceWithoutGaps(Duration period) {
        List<Instant> slots = SLOT_RUNS.keySet().stream().sorted().toList();
        assertThat(SLOT_RUNS).allSatisfy((slot, runs) -> assertThat(runs.get()).as("runs of slot %s", slot).isEqualTo(1));
        assertThat(slots).allSatisfy(slot -> assertThat(slot.toEpochMilli() % period.toMillis()).isZero());
        long span = Duration.between(slots.get(0), slots.get(slots.size() - 1)).toMillis() / period.toMillis() + 1;
        assertThat(slots).as("slots from first to last, none skipped").hasSize((int) span);
    }

    static void ran() {
        SLOT_RUNS.computeIfAbsent(LockedCall.current().orElseThrow().slot().orElseThrow(), s -> new AtomicInteger())
                .incrementAndGet();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @EnableScheduling
    static class CronSlotApp {
        @Bean
        Object cronSlotJob(@Value("${instance}") int instance) {
            return new Object() {
                @Scheduled(cron = "* * * * * *")
                @DistributedLocked(name = "job:cron-slot", oncePerSlot = true, waitFor = "500ms")
                public void run() {
                    ran();
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @EnableScheduling
    static class RateSlotApp {
        @Bean
        Object rateSlotJob(@Value("${instance}") int instance) {
            return new Object() {
                @Scheduled(fixedRate = 200)
                @DistributedLocked(name = "job:rate-slot", oncePerSlot = true, waitFor = "100ms")
                public void run() {
                    ran();
                }
            };
        }
    }
}
