package io.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockNotAcquiredException;
import io.latchkey.LockOptions;
import io.latchkey.redis.RedisLockProvider;
import io.latchkey.testkit.redis.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The auto-configuration on one real Redis server: binding, back-off, the annotation's behaviour and start-up errors. */
class LatchkeyAutoConfigurationTest {

    private static RedisServer redis;

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class,
                        LatchkeyMetricsAutoConfiguration.class))
                .withConfiguration(AutoConfigurations.of(BootLine.HEALTH))
                .withPropertyValues("latchkey.uri=" + redis.uri(redis.endpoints()));
    }

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

    @Test
    void propertiesBindToTheClientsOptions() {
        runner().withPropertyValues("latchkey.lease=4s", "latchkey.safety-margin=300ms", "latchkey.timeout=1500ms",
                "latchkey.namespace=billing").run(context -> {
                    LockOptions options = context.getBean(LockClient.class).options();
                    assertThat(options.lease()).isEqualTo(Duration.ofSeconds(4));
                    assertThat(options.safetyMargin()).isEqualTo(Duration.ofMillis(300));
                    assertThat(options.timeout()).isEqualTo(Duration.ofMillis(1500));
                    assertThat(options.namespace()).isEqualTo("billing");
                    assertThat(context.getBean(LockClient.class).backendName()).isEqualTo("redis");
                });
    }

    @Test
    void aBadPropertyValueFailsStartUpNamingIt() {
        runner().withPropertyValues("latchkey.lease=2s", "latchkey.safety-margin=2s").run(context ->
                assertThat(context).hasFailed().getFailure().rootCause().hasMessageContaining("safety margin must be shorter than the lease"));
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwnClient() {
        runner().withUserConfiguration(OwnClient.class).run(context -> {
            assertThat(context).hasSingleBean(LockClient.class);
            assertThat(context.getBean(LockClient.class).options().namespace()).isEqualTo("own");
        });
    }

    @Test
    void buildsOnTheApplicationsRedissonClientAndLeavesItOpen() {
        Config config = new Config();
        config.setLockWatchdogTimeout(5000);
        config.useSingleServer().setAddress(redis.uri(redis.endpoints()));
        RedissonClient redisson = Redisson.create(config);
        try {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class))
                    .withBean(RedissonClient.class, () -> redisson, d -> d.setDestroyMethodName(""))
                    // a 5 s lease needs a timeout below 5 s minus the margin
                    .withPropertyValues("latchkey.timeout=2s")
                    .run(context -> {
                        LockClient client = context.getBean(LockClient.class);
                        assertThat(client.backendName()).isEqualTo("redis");
                        assertThat(client.options().lease()).isEqualTo(Duration.ofSeconds(5));
                        try (Lease lease = client.lock("auto:redisson").tryLock().orElseThrow()) {
                            assertThat(lease.isValid()).isTrue();
                        }
                    });
            assertThat(redisson.isShutdown()).isFalse();
        } finally {
            redisson.shutdown();
        }
    }

    @Test
    void latchkeyUriWinsOverTheApplicationsRedissonClient() {
        Config config = new Config();
        config.useSingleServer().setAddress(redis.uri(redis.endpoints()));
        RedissonClient redisson = Redisson.create(config);
        try {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class))
                    .withBean(RedissonClient.class, () -> redisson, d -> d.setDestroyMethodName(""))
                    // the URI's own namespace tells its client from one on the Redisson client
                    .withPropertyValues("latchkey.uri=" + redis.uri(redis.endpoints()) + "?namespace=from-uri")
                    .run(context -> assertThat(context).hasSingleBean(LockClient.class)
                            .getBean(LockClient.class).extracting(c -> c.options().namespace()).isEqualTo("from-uri"));
        } finally {
            redisson.shutdown();
        }
    }

    @Test
    void theNameTemplateReadsTheArgumentsAndTheMethodGetsItsLease() {
        runner().withUserConfiguration(Jobs.class).run(context -> {
            Jobs.Service service = context.getBean(Jobs.Service.class);
            assertThat(service.rebuild(7)).isEqualTo("job:user:7 held=true");
        });
    }

    @Test
    void whenTheLockIsHeldSkipReturnsNothingAndThrowThrows() throws Exception {
        try (LockClient other = LockClient.connect(redis.uri(redis.endpoints()));
                Lease held = other.lock("job:busy").tryLock().orElseThrow()) {
            runner().withUserConfiguration(Jobs.class).run(context -> {
                Jobs.Service service = context.getBean(Jobs.Service.class);
                assertThat(service.skipping()).isZero();
                assertThat(service.runs).isZero();
                assertThatThrownBy(service::throwing).isInstanceOf(LockNotAcquiredException.class)
                        .hasMessageContaining("job:busy");
            });
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void readAndWriteMethodsTakeTheModesOfTheReadWriteLock() throws Exception {
        try (LockClient other = LockClient.connect(redis.uri(redis.endpoints()))) {
            runner().withUserConfiguration(Jobs.class).run(context -> {
                Jobs.Service service = context.getBean(Jobs.Service.class);
                try (Lease read = other.readWriteLock("job:dim").readLock().tryLock().orElseThrow()) {
                    assertThat(service.readDim()).as("a READ method beside another reader").isEqualTo("read held=true");
                    assertThat(service.writeDim()).as("a WRITE method beside a reader: skipped").isNull();
                    assertThat(service.lockDim()).as("a LOCK method of the same name: apart from the read-write lock")
                            .isEqualTo("lock");
                    assertThat(read.isValid()).isTrue();
                }
                try (Lease write = other.readWriteLock("job:dim").writeLock().tryLock().orElseThrow()) {
                    assertThat(service.readDim()).as("a READ method beside a writer: skipped").isNull();
                    assertThat(write.isValid()).isTrue();
                }
                assertThat(service.writeDim()).isEqualTo("write held=true");
            });
        }
    }

    @Test
    void anExceptionOfTheMethodReachesTheCallerAndTheLockIsReleased() {
        runner().withUserConfiguration(Jobs.class).run(context -> {
            Jobs.Service service = context.getBean(Jobs.Service.class);
            assertThatThrownBy(service::failing).isInstanceOf(java.io.IOException.class).hasMessage("disk full");
            assertThat(context.getBean(LockClient.class).lock("job:failing").tryLock()).isPresent()
                    .hasValueSatisfying(Lease::close);
        });
    }

    /**
     * A call still inside its work when the context closes is interrupted, and its lock stays held until
     * it returns: the job here finishes its write for a second after the interrupt (as a job that must
     * not stop halfway does), and another client that waits for the lock gets it only after that.
     */
    @Test
    void closingTheContextWaitsForARunningCallBeforeItsLockIsReleased() throws Exception {
        Stubborn job = new Stubborn(Duration.ofSeconds(1));
        AtomicLong acquiredAt = new AtomicLong();
        try (LockClient other = LockClient.connect(redis.uri(redis.endpoints()))) {
            Thread[] threads = new Thread[2]; // the caller of the job, and the other client's waiter
            runner().withPropertyValues("latchkey.lease=6s", "latchkey.timeout=1s").withBean(Stubborn.class, () -> job)
                    .run(context -> {
                        Stubborn proxied = context.getBean(Stubborn.class);
                        threads[0] = new Thread(proxied::write, "closing-test-caller");
                        threads[0].start();
                        assertThat(job.started.await(30, TimeUnit.SECONDS)).as("the locked call started").isTrue();
                        threads[1] = new Thread(() -> {
                            try {
                                other.lock("job:closing").tryLock(Duration.ofMinutes(1)).ifPresent(lease -> {
                                    acquiredAt.set(System.nanoTime());
                                    lease.close();
                                });
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }, "closing-test-other");
                        threads[1].start();
                    }); // the runner closes the context here, while the call runs
            threads[0].join(Duration.ofSeconds(30).toMillis());
            threads[1].join(Duration.ofMinutes(1).toMillis());
        }
        assertThat(job.endedAt).as("the call finished its work").isPositive();
        assertThat(acquiredAt.get()).as("the other client got the lock").isPositive();
        assertThat(acquiredAt.get() - job.endedAt).as("the lock was free only once the call had returned").isPositive();
        assertThat(job.interrupted).as("the running call was interrupted as the context closed").isTrue();
    }

    /** A job of five times {@code finishing} that, once interrupted, goes on for {@code finishing} to complete its write. */
    static class Stubborn {
        final CountDownLatch started = new CountDownLatch(1);
        private final Duration finishing;
        volatile boolean interrupted;
        volatile long endedAt;

        Stubborn(Duration finishing) {
            this.finishing = finishing;
        }

        @DistributedLocked(name = "job:closing")
        public void write() {
            started.countDown();
            long until = System.nanoTime() + finishing.multipliedBy(5).toNanos(); // the job's own length
            while (System.nanoTime() - until < 0) {
                try {
                    Thread.sleep(10); // stands for the work of the job
                } catch (InterruptedException e) {
                    if (!interrupted) {
                        interrupted = true;
                        until = System.nanoTime() + finishing.toNanos();
                    }
                }
            }
            endedAt = System.nanoTime();
        }
    }

    @Test
    void healthIsUpWhileTheBackendAnswersAndDownWhenItDoesNot() {
        runner().withPropertyValues("latchkey.timeout=1s").run(context -> {
            assertThat(BootLine.health(context).status()).isEqualTo("UP");
            assertThat(BootLine.health(context).details()).containsEntry("leasesHeld", 0L)
                    .containsEntry("backend", "redis").containsEntry("lock", "latchkey:health")
                    .containsEntry("acquired", true);
            LockClient client = context.getBean(LockClient.class);
            String name = "health:" + ProcessHandle.current().pid() + ":" + System.nanoTime();
            try (Lease lease = client.lock(name).lock(Duration.ZERO)) {
                // the count comes from the lock events, on the client's event thread
                long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
                while (!Long.valueOf(1).equals(BootLine.health(context).details().get("leasesHeld"))) {
                    assertThat(System.nanoTime() - deadline).as("leasesHeld 1 while a lock is held").isNegative();
                    Thread.sleep(20);
                }
            }
            redis.pause();
            try {
                var down = BootLine.health(context);
                assertThat(down.status()).isEqualTo("DOWN");
                assertThat(down.details()).containsKey("error").containsEntry("backend", "redis");
            } finally {
                redis.unpause();
            }
        });
        runner().withPropertyValues("management.health.latchkey.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("latchkeyHealthIndicator"));
    }

    @Test
    void withAMeterRegistryTheLockMetricsAreRegistered() {
        runner().withConfiguration(AutoConfigurations.of(BootLine.metricsAutoConfigurations()))
                .withUserConfiguration(Jobs.class).run(context -> {
                    context.getBean(Jobs.Service.class).rebuild(1);
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    // events reach the binder on the client's event thread
                    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                    while (registry.find("latchkey.hold").timer() == null || registry.find("latchkey.hold").timer().count() == 0) {
                        assertThat(System.nanoTime() - deadline).as("latchkey.hold recorded within 10s").isNegative();
                        Thread.sleep(20);
                    }
                    assertThat(registry.get("latchkey.acquire").tag("outcome", "acquired").tag("backend", "redis").timer().count())
                            .isEqualTo(1);
                });
    }

    @Test
    void startUpFailsForMethodsTheProxyCannotReach() {
        for (Class<?> bad : new Class<?>[] {BadMethods.PrivateJob.class, BadMethods.FinalJob.class, BadMethods.StaticJob.class}) {
            runner().withUserConfiguration(bad).run(context -> assertThat(context).hasFailed().getFailure()
                    .rootCause().hasMessageContaining("@DistributedLocked method " + bad.getName() + ".run")
                    .hasMessageContaining("a Spring proxy cannot intercept it"));
        }
    }

    @Test
    void startUpFailsForANameThatDoesNotParseOrABadDurationOrASlotWithoutASchedule() {
        runner().withUserConfiguration(BadMethods.BadName.class).run(context -> assertThat(context).hasFailed().getFailure()
                .hasStackTraceContaining("BadName.run: the lock name 'job:#{#id' does not parse"));
        runner().withUserConfiguration(BadMethods.BadDuration.class).run(context -> assertThat(context).hasFailed().getFailure()
                .hasStackTraceContaining("BadDuration.run: lockAtMostFor 'ten minutes' is not a duration"));
        runner().withUserConfiguration(BadMethods.SlotWithoutSchedule.class).run(context -> assertThat(context).hasFailed()
                .getFailure().hasStackTraceContaining("SlotWithoutSchedule.run: oncePerSlot needs exactly one @Scheduled"));
        runner().withUserConfiguration(BadMethods.SlotOnAReadLock.class).run(context -> assertThat(context).hasFailed()
                .getFailure().hasStackTraceContaining("SlotOnAReadLock.run: oncePerSlot needs mode LOCK, and mode is READ"));
    }

    @Test
    void startUpFailsForAnnotatedMethodsWithoutALockClient() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class))
                .withUserConfiguration(NoClient.class)
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasMessageContaining("need a LockClient bean").hasMessageContaining("latchkey.uri"));
    }

    @Configuration(proxyBeanMethods = false)
    static class NoClient {
        @DistributedLocked(name = "job:no-client")
        public void run() {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnClient {
        @Bean
        LockClient ownLockClient() {
            return LockClient.connect(URI.create(redis.uri(redis.endpoints())), LockOptions.builder().namespace("own").build());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Jobs {
        @Bean
        Service service(LockClient client) {
            return new Service(client);
        }

        static class Service {
            private final LockClient client;
            int runs;

            Service(LockClient client) {
                this.client = client;
            }

            @DistributedLocked(name = "job:user:#{#userId}")
            public String rebuild(long userId) {
                LockedCall call = LockedCall.current().orElseThrow();
                return call.lease().lockName() + " held=" + client.lock("job:user:" + userId).isHeldByCurrentThread();
            }

            @DistributedLocked(name = "job:busy")
            public int skipping() {
                return ++runs;
            }

            @DistributedLocked(name = "job:busy", waitFor = "200ms", onNotAcquired = DistributedLocked.NotAcquired.THROW)
            public int throwing() {
                return ++runs;
            }

            @DistributedLocked(name = "job:dim", mode = DistributedLocked.Mode.READ)
            public String readDim() {
                return "read held=" + client.readWriteLock("job:dim").readLock().isHeldByCurrentThread();
            }

            @DistributedLocked(name = "job:dim", mode = DistributedLocked.Mode.WRITE)
            public String writeDim() {
                return "write held=" + client.readWriteLock("job:dim").writeLock().isHeldByCurrentThread();
            }

            @DistributedLocked(name = "job:dim")
            public String lockDim() {
                return "lock";
            }

            @DistributedLocked(name = "job:failing")
            public void failing() throws java.io.IOException {
                throw new java.io.IOException("disk full");
            }
        }
    }

    static class BadMethods {
        @Configuration(proxyBeanMethods = false)
        static class SlotOnAReadLock {
            @DistributedLocked(name = "job:slot-read", mode = DistributedLocked.Mode.READ, oncePerSlot = true)
            @org.springframework.scheduling.annotation.Scheduled(cron = "0 0 * * * *")
            public void run() {
            }
        }

        @Configuration(proxyBeanMethods = false)
        @Import(Jobs.class)
        static class PrivateJob {
            @DistributedLocked(name = "job:private")
            private void run() {
            }
        }

        @Configuration(proxyBeanMethods = false)
        static class FinalJob {
            @DistributedLocked(name = "job:final")
            public final void run() {
            }
        }

        @Configuration(proxyBeanMethods = false)
        static class StaticJob {
            @DistributedLocked(name = "job:static")
            public static void run() {
            }
        }

        @Configuration(proxyBeanMethods = false)
        static class BadName {
            @DistributedLocked(name = "job:#{#id")
            public void run(long id) {
            }
        }

        @Configuration(proxyBeanMethods = false)
        static class BadDuration {
            @DistributedLocked(name = "job:bad", lockAtMostFor = "ten minutes")
            public void run() {
            }
        }

        @Configuration(proxyBeanMethods = false)
        static class SlotWithoutSchedule {
            @DistributedLocked(name = "job:slot", oncePerSlot = true)
            public void run() {
            }
        }
    }

}
