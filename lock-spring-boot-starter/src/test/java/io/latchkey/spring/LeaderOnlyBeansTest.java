package io.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.testkit.CrashFailover;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Scope;
import org.springframework.core.NestedExceptionUtils;

/**
 * {@link LeaderOnly} beans on one real Redis: two application contexts on one election, the bean running
 * in the leader's only and moving on when the leader's context closes; phases, events, health, and the
 * start-up errors.
 */
class LeaderOnlyBeansTest {

    @RegisterExtension
    static final SharedServer<RedisServer> REDIS = SharedServer.of("redis", RedisServer::start);

    static final Duration LEASE = Duration.ofSeconds(3);
    /** How long a waiting candidate may take to be granted the lock once it is free. */
    static final Duration WAKE_UP = CrashFailover.WAKE_UP_BUDGET;
    /** A bound for waits that assert no timing: only a broken election makes them time out. */
    static final Duration PATIENCE = LEASE.multipliedBy(5);

    /** Every start, stop and event of every instance of a test, in the order they happened. */
    static final List<String> JOURNAL = new ArrayList<>();
    /** Workers running now, across the instances, and the most seen at once. */
    static final AtomicInteger RUNNING = new AtomicInteger();
    static final AtomicInteger MOST_RUNNING = new AtomicInteger();

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    @AfterEach
    void closeInstances() {
        instances.forEach(ConfigurableApplicationContext::close);
        instances.clear();
        synchronized (JOURNAL) {
            JOURNAL.clear();
        }
        RUNNING.set(0);
        MOST_RUNNING.set(0);
    }

    static void log(String entry) {
        synchronized (JOURNAL) {
            JOURNAL.add(entry);
        }
    }

    static List<String> journal() {
        synchronized (JOURNAL) {
            return List.copyOf(JOURNAL);
        }
    }

    private static String uri() {
        return REDIS.get().uri(REDIS.get().endpoints());
    }

    private ConfigurableApplicationContext startInstance(int instance, String election) {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(Instance.class)
                .web(WebApplicationType.NONE)
                .properties("spring.main.banner-mode=off", "latchkey.uri=" + uri(), "latchkey.lease=" + LEASE.toMillis() + "ms",
                        "latchkey.timeout=1s", "latchkey.owner=instance-" + instance, "instance=" + instance,
                        "election=" + election)
                .run();
        instances.add(context);
        return context;
    }

    /**
     * The leader's worker runs, the standby's does not (Spring's lifecycle did not start it), and when
     * the leader's context closes the other instance starts its worker within a lease plus the wake-up,
     * only after the first one stopped; each instance's grant comes before its worker starts, and its
     * revocation after the worker stopped, with terms that grow.
     */
    @Test
    void theBeanRunsInTheLeaderOnlyAndMovesWhenTheLeadersContextCloses() {
        ConfigurableApplicationContext first = startInstance(1, "feed");
        await("instance 1 leads and runs its worker", () -> worker(first).isRunning());
        long firstTerm = first.getBean(Events.class).received.get(0).term();
        ConfigurableApplicationContext second = startInstance(2, "feed");
        assertThat(worker(second).isRunning()).as("the standby's worker after its context started").isFalse();

        BootLine.Health leaderHealth = BootLine.health(first);
        assertThat(leaderHealth.status()).isEqualTo("UP");
        assertThat(leaderHealth.details())
                .containsEntry("elections", Map.of("feed", Map.of("leader", true, "term", firstTerm)));
        BootLine.Health standbyHealth = BootLine.health(second);
        assertThat(standbyHealth.status()).as("a standby is healthy").isEqualTo("UP");
        assertThat(standbyHealth.details()).as("a standby names the leader's owner")
                .containsEntry("elections", Map.of("feed", Map.of("leader", false, "ledBy", "instance-1")));

        long closing = System.nanoTime();
        first.close();
        await("instance 2 runs its worker", () -> worker(second).isRunning());
        // from the start of the close to the other worker's start, not to this thread's look after the close
        // returned: the rest of the close (the client's own shutdown) is not the hand-over
        Duration handoff = Duration.ofNanos(worker(second).startedAt - closing);
        assertThat(handoff).as("from the leader's close to the other's worker running").isLessThanOrEqualTo(LEASE.plus(WAKE_UP));

        await("instance 2's grant", () -> !second.getBean(Events.class).received.isEmpty());
        long secondTerm = second.getBean(Events.class).received.get(0).term();
        assertThat(secondTerm).as("the second term").isGreaterThan(firstTerm);
        assertThat(BootLine.health(second).details()).containsEntry("elections",
                Map.of("feed", Map.of("leader", true, "term", secondTerm)));
        second.close();
        assertThat(journal()).as("starts, stops and events of both instances, in order").containsExactly(
                "1 granted feed " + firstTerm, "1 start",
                "1 stop", "1 revoked feed " + firstTerm + " CLOSED",
                "2 granted feed " + secondTerm, "2 start",
                "2 stop", "2 revoked feed " + secondTerm + " CLOSED");
        assertThat(MOST_RUNNING.get()).as("workers running at once").isEqualTo(1);
    }

    /**
     * One context with two leader-only beans of one election, one annotated on its class and one on its
     * {@code @Bean} method with a placeholder: neither runs while another client holds the election's
     * lock; once it is released both start, in ascending phase order, within a lease plus the wake-up;
     * closing the context stops them in descending phase order. One candidacy serves both.
     */
    @Test
    void beansOfOneElectionStartInPhaseOrderOnceTheLockIsFreeAndStopInReverse() throws Exception {
        try (LockClient other = LockClient.connect(uri() + "?owner=batch-job")) {
            Lease held = other.lock("jobs").tryLock().orElseThrow();
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class))
                    .withConfiguration(AutoConfigurations.of(BootLine.HEALTH))
                    .withPropertyValues("latchkey.uri=" + uri(), "latchkey.lease=" + LEASE.toMillis() + "ms", "latchkey.timeout=1s",
                            "instance=1", "election=jobs", "jobs.election=jobs")
                    .withUserConfiguration(TwoPhases.class)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        assertThat(journal()).as("nothing started while another client holds the lock").isEmpty();
                        assertThat(BootLine.health(context).details())
                                .as("a plain holder of the election's lock leads as far as the backend knows")
                                .containsEntry("elections", Map.of("jobs", Map.of("leader", false, "ledBy", "batch-job")));
                        long released = System.nanoTime();
                        held.close();
                        await("both beans running", () -> context.getBean("early", Worker.class).isRunning()
                                && context.getBean("late", Worker.class).isRunning());
                        assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThanOrEqualTo(LEASE.plus(WAKE_UP));
                    });
        }
        List<String> journal = journal();
        long term = Long.parseLong(journal.get(0).substring("1 granted jobs ".length()));
        assertThat(journal).containsExactly("1 granted jobs " + term, "1 start early", "1 start late",
                "1 stop late", "1 stop early", "1 revoked jobs " + term + " CLOSED");
    }

    /**
     * A bean whose start throws: the beans of its election that started are stopped and the term is
     * resigned, so that another candidate (here a plain client) gets the election's lock while this
     * instance stands aside.
     */
    @Test
    void aBeanThatFailsToStartStopsTheOthersAndResignsTheTerm() throws Exception {
        try (LockClient other = LockClient.connect(uri())) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class))
                    .withPropertyValues("latchkey.uri=" + uri(), "latchkey.lease=" + LEASE.toMillis() + "ms", "latchkey.timeout=1s",
                            "election=flaky")
                    .withUserConfiguration(FailingStart.class)
                    .run(context -> {
                        await("the term resigned", () -> journal().stream().anyMatch(e -> e.endsWith(" RESIGNED")));
                        List<String> journal = journal();
                        long term = Long.parseLong(journal.get(0).substring("1 granted flaky ".length()));
                        assertThat(journal).containsExactly("1 granted flaky " + term, "1 start ok", "1 start failing",
                                "1 stop ok", "1 revoked flaky " + term + " RESIGNED");
                        assertThat(other.lock("flaky").tryLock(WAKE_UP.plus(Duration.ofSeconds(1))))
                                .as("the lock, while the instance stands aside for a lease").hasValueSatisfying(Lease::close);
                    });
        }
    }

    /**
     * Each bad input fails the start with one line naming the bean, the value and the rule: a blank
     * name, a bean that is not a {@code SmartLifecycle}, one that starts by itself, one that is not a
     * singleton; and leader-only beans without a {@code LockClient}.
     */
    @Test
    void startUpFailsForABadNameOrBeanNamingTheBeanTheValueAndTheRule() {
        ApplicationContextRunner runner = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class))
                .withPropertyValues("latchkey.uri=" + uri(), "instance=1", "blank= ");
        runner.withUserConfiguration(Bad.BlankName.class).run(context -> assertThat(failure(context)).isEqualTo(
                "bean 'job': @LeaderOnly(\"${blank}\") names no election: the election name must not be blank"));
        runner.withUserConfiguration(Bad.NotALifecycle.class).run(context -> assertThat(failure(context)).isEqualTo(
                "bean 'job': @LeaderOnly(\"jobs\") is on a java.lang.String, which is not a SmartLifecycle:"
                        + " only a SmartLifecycle can be started and stopped with the leadership"));
        runner.withUserConfiguration(Bad.AutoStarting.class).run(context -> assertThat(failure(context)).isEqualTo(
                "bean 'job': @LeaderOnly(\"jobs\") needs isAutoStartup() to return false, and it returns true:"
                        + " the election starts it, Spring's lifecycle would start it on every instance"));
        runner.withUserConfiguration(Bad.Prototype.class).run(context -> assertThat(failure(context)).isEqualTo(
                "bean 'job': @LeaderOnly(\"jobs\") is on a bean that is not a singleton: a leader-only bean must be one"
                        + " instance per context"));
        assertThat(journal()).as("no bad bean started").isEmpty();
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LatchkeyAutoConfiguration.class))
                .withPropertyValues("instance=1").withUserConfiguration(Bad.NoClient.class)
                .run(context -> assertThat(failure(context))
                        .startsWith("@LeaderOnly beans [job] need a LockClient bean, and there is none"));
    }

    /** The message of the most specific cause of the context's start-up failure. */
    private static String failure(AssertableApplicationContext context) {
        assertThat(context).hasFailed();
        return NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()).getMessage();
    }

    private static Worker worker(ConfigurableApplicationContext context) {
        return context.getBean(Worker.class);
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("%s within %s", what, PATIENCE).isNegative();
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting: " + what, e);
            }
        }
    }

    /** A lifecycle bean that logs its starts and stops, and counts the workers running at once. */
    static class Worker implements SmartLifecycle {
        private final String label;
        private final int phase;
        private volatile boolean running;
        /** The {@link System#nanoTime()} of its last start. */
        volatile long startedAt;

        /** A worker that logs itself as {@code instance} and, if not empty, {@code name}. */
        Worker(String instance, String name, int phase) {
            this.label = name.isEmpty() ? "" : " " + name;
            this.instance = instance;
            this.phase = phase;
        }

        private final String instance;

        @Override
        public boolean isAutoStartup() {
            return false;
        }

        @Override
        public void start() {
            startedAt = System.nanoTime();
            MOST_RUNNING.accumulateAndGet(RUNNING.incrementAndGet(), Math::max);
            running = true;
            log(instance + " start" + label);
        }

        @Override
        public void stop() {
            log(instance + " stop" + label);
            running = false;
            RUNNING.decrementAndGet();
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        @Override
        public int getPhase() {
            return phase;
        }
    }

    /** Logs each leadership event of its context, and keeps them. */
    static class Events implements ApplicationListener<LeadershipEvent> {
        final String instance;
        final List<LeadershipEvent> received = new java.util.concurrent.CopyOnWriteArrayList<>();

        Events(String instance) {
            this.instance = instance;
        }

        @Override
        public void onApplicationEvent(LeadershipEvent event) {
            received.add(event);
            log(instance + (event instanceof LeadershipRevokedEvent revoked
                    ? " revoked " + event.election() + " " + event.term() + " " + revoked.reason()
                    : " granted " + event.election() + " " + event.term()));
        }
    }

    @LeaderOnly("${election}")
    static class FeedWorker extends Worker {
        FeedWorker(String instance, String name) {
            super(instance, name, 0);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({LatchkeyAutoConfiguration.class, LatchkeyHealthAutoConfiguration.class,
            LatchkeyBoot3HealthAutoConfiguration.class})
    static class Instance {
        @Bean
        FeedWorker feedWorker(@Value("${instance}") String instance) {
            return new FeedWorker(instance, "");
        }

        @Bean
        Events events(@Value("${instance}") String instance) {
            return new Events(instance);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoPhases {
        @Bean
        @LeaderOnly("${jobs.election}")
        Worker late() {
            return new Worker("1", "late", 10);
        }

        @Bean
        FeedWorker early() {
            return new FeedWorker("1", "early");
        }

        @Bean
        Events events() {
            return new Events("1");
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class FailingStart {
        @Bean
        FeedWorker ok() {
            return new FeedWorker("1", "ok");
        }

        @Bean
        @LeaderOnly("${election}")
        Worker failing() {
            return new Worker("1", "failing", 10) {
                @Override
                public void start() {
                    log("1 start failing");
                    throw new IllegalStateException("the queue is not there");
                }
            };
        }

        @Bean
        Events events() {
            return new Events("1");
        }
    }

    static class Bad {
        @Configuration(proxyBeanMethods = false)
        static class BlankName {
            @Bean
            @LeaderOnly("${blank}")
            Worker job() {
                return new Worker("bad", "", 0);
            }
        }

        @Configuration(proxyBeanMethods = false)
        static class NotALifecycle {
            @Bean
            @LeaderOnly("jobs")
            String job() {
                return "not a lifecycle";
            }
        }

        @Configuration(proxyBeanMethods = false)
        static class AutoStarting {
            @Bean
            @LeaderOnly("jobs")
            Worker job() {
                return new Worker("bad", "", 0) {
                    @Override
                    public boolean isAutoStartup() {
                        return true;
                    }
                };
            }
        }

        @Configuration(proxyBeanMethods = false)
        static class Prototype {
            @Bean
            @LeaderOnly("jobs")
            @Scope("prototype")
            Worker job() {
                return new Worker("bad", "", 0);
            }
        }

        @Configuration(proxyBeanMethods = false)
        static class NoClient {
            @Bean
            @LeaderOnly("jobs")
            Worker job() {
                return new Worker("bad", "", 0);
            }
        }
    }
}
