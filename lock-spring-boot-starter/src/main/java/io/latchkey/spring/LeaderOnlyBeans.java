package io.latchkey.spring;

import io.latchkey.Candidacy;
import io.latchkey.ElectionListener;
import io.latchkey.Leadership;
import io.latchkey.LockClient;
import io.latchkey.Revocation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.BeanNameAware;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;

/**
 * The elections of the {@link LeaderOnly} beans of one application context: one candidacy per election
 * name, whose listener starts and stops the beans of that name and publishes the
 * {@link LeadershipEvent}s.
 *
 * <p>The beans are found and checked once every singleton exists, before Spring starts any lifecycle
 * bean, so a bad one fails the context's start. Each leader-only bean is registered as a dependency of
 * this one: Spring then stops this bean, and with it the candidacies (whose {@code revoked} stops the
 * beans), before it would stop a leader-only bean itself, whatever the phases.
 *
 * <p>A bean whose {@code start()} throws is logged as an ERROR; the beans of its election that started
 * are stopped and the term is resigned (standing aside for a lease), so that another instance, which
 * may be able to start them, leads. A bean's stop is waited for, for at most the client's lease; one
 * that takes longer is logged as a WARN and the next one is stopped, so a stop that hangs cannot keep
 * the election without a leader for ever.
 *
 * <p>Thread-safe: Spring calls the lifecycle methods one at a time; each election's beans are started
 * and stopped on its candidacy's thread only.
 */
final class LeaderOnlyBeans implements SmartLifecycle, SmartInitializingSingleton, BeanNameAware {

    private static final Logger log = LoggerFactory.getLogger(LeaderOnlyBeans.class);

    private final ConfigurableListableBeanFactory beanFactory;
    private final ObjectProvider<LockClient> client;
    private final ApplicationEventPublisher publisher;
    private String beanName = "latchkeyLeaderOnlyBeans";
    /** Election name to the names of its beans, sorted by name; set before the context starts. */
    private volatile Map<String, List<String>> elections = Map.of();
    /** Election name to its candidacy, while running. */
    private volatile Map<String, Candidacy> candidacies = Map.of();
    private volatile boolean running;

    LeaderOnlyBeans(ConfigurableListableBeanFactory beanFactory, ObjectProvider<LockClient> client,
            ApplicationEventPublisher publisher) {
        this.beanFactory = beanFactory;
        this.client = client;
        this.publisher = publisher;
    }

    @Override
    public void setBeanName(String name) {
        this.beanName = name;
    }

    @Override
    public void afterSingletonsInstantiated() {
        Map<String, List<String>> found = new TreeMap<>();
        for (String name : beanFactory.getBeanNamesForAnnotation(LeaderOnly.class)) {
            LeaderOnly annotation = beanFactory.findAnnotationOnBean(name, LeaderOnly.class);
            String election = check(name, annotation);
            found.computeIfAbsent(election, e -> new ArrayList<>()).add(name);
            beanFactory.registerDependentBean(name, beanName); // stopped after this bean; see the class comment
        }
        if (!found.isEmpty() && client.getIfAvailable() == null) {
            throw new IllegalStateException("@LeaderOnly beans " + found.values().stream().flatMap(List::stream).sorted().toList()
                    + " need a LockClient bean, and there is none: set latchkey.uri (such as redis://localhost:6379), give"
                    + " the application a RedissonClient, CuratorFramework or jetcd Client bean with the matching Latchkey"
                    + " backend, or define a LockClient");
        }
        found.replaceAll((election, names) -> List.copyOf(names));
        elections = found;
    }

    /** The election's name of the bean {@code name}, or an exception saying which rule it breaks. */
    private String check(String name, LeaderOnly annotation) {
        String raw = annotation.value();
        String election = raw == null ? null : beanFactory.resolveEmbeddedValue(raw);
        String quoted = "@LeaderOnly(\"" + raw + "\")";
        if (election == null || election.isBlank()) {
            throw new IllegalStateException("bean '" + name + "': " + quoted + " names no election: the election name"
                    + " must not be blank");
        }
        if (!beanFactory.isSingleton(name)) {
            throw new IllegalStateException("bean '" + name + "': " + quoted + " is on a bean that is not a singleton: a"
                    + " leader-only bean must be one instance per context");
        }
        Object bean = beanFactory.getBean(name);
        if (!(bean instanceof SmartLifecycle lifecycle)) {
            throw new IllegalStateException("bean '" + name + "': " + quoted + " is on a " + bean.getClass().getName()
                    + ", which is not a SmartLifecycle: only a SmartLifecycle can be started and stopped with the leadership");
        }
        if (lifecycle.isAutoStartup()) {
            throw new IllegalStateException("bean '" + name + "': " + quoted + " needs isAutoStartup() to return false,"
                    + " and it returns true: the election starts it, Spring's lifecycle would start it on every instance");
        }
        return election;
    }

    /**
     * This instance's state in each election it campaigns in, by name: the term it leads, or empty for a
     * standby. Empty before the context started and after it stopped.
     */
    Map<String, Optional<Leadership>> leadership() {
        Map<String, Optional<Leadership>> states = new LinkedHashMap<>();
        candidacies.forEach((election, candidacy) -> states.put(election, candidacy.leadership()));
        return states;
    }

    @Override
    public void start() {
        if (running) {
            return;
        }
        Map<String, Candidacy> started = new TreeMap<>();
        if (!elections.isEmpty()) {
            LockClient c = client.getObject();
            elections.forEach((election, names) -> {
                Beans beans = new Beans(election, names, c.options().lease());
                beans.candidacy = c.election(election).campaign(beans);
                beans.ready.countDown();
                started.put(election, beans.candidacy);
            });
        }
        candidacies = started;
        running = true;
    }

    @Override
    public void stop() {
        Map<String, Candidacy> closing = candidacies;
        candidacies = Map.of();
        running = false;
        closing.values().forEach(Candidacy::close); // each tells revoked(CLOSED), which stops its beans
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** The listener of one election: starts and stops its beans, and publishes the events. */
    private final class Beans implements ElectionListener {
        private final String election;
        private final List<String> names;
        private final Duration stopBound;
        private final CountDownLatch ready = new CountDownLatch(1);
        private volatile Candidacy candidacy; // set once campaign() returned; see ready

        Beans(String election, List<String> names, Duration stopBound) {
            this.election = election;
            this.names = names;
            this.stopBound = stopBound;
        }

        /** The beans in ascending phase order, then by name. */
        private List<Map.Entry<String, SmartLifecycle>> inPhaseOrder() {
            List<Map.Entry<String, SmartLifecycle>> beans = new ArrayList<>();
            for (String name : names) {
                beans.add(Map.entry(name, beanFactory.getBean(name, SmartLifecycle.class)));
            }
            beans.sort(Comparator.comparingInt((Map.Entry<String, SmartLifecycle> e) -> e.getValue().getPhase())
                    .thenComparing(Map.Entry::getKey));
            return beans;
        }

        @Override
        public void elected(Leadership leadership) {
            List<Map.Entry<String, SmartLifecycle>> beans = inPhaseOrder();
            log.info("election '{}': leading for term {}; starting {}", election, leadership.term(),
                    beans.stream().map(Map.Entry::getKey).toList());
            publish(new LeadershipGrantedEvent(leadership)); // first, so that a listener can hand the term to the beans
            boolean failed = false;
            for (Map.Entry<String, SmartLifecycle> bean : beans) {
                try {
                    if (!bean.getValue().isRunning()) {
                        bean.getValue().start();
                    }
                } catch (RuntimeException e) {
                    log.error("election '{}': bean '{}' failed to start in term {}; stopping the election's beans and"
                            + " resigning, so that another instance leads", election, bean.getKey(), leadership.term(), e);
                    failed = true;
                    break;
                }
            }
            if (failed) {
                stopAll(leadership);
                awaitCandidacy().resign(); // revoked(RESIGNED) follows on this thread once this call returns
            }
        }

        @Override
        public void revoked(Leadership leadership, Revocation why) {
            log.info("election '{}': term {} ended ({}); stopping its beans", election, leadership.term(), why);
            stopAll(leadership);
            publish(new LeadershipRevokedEvent(leadership, why));
        }

        /** The running beans, in descending phase order, each stop complete (or its bound passed) before the next. */
        private void stopAll(Leadership leadership) {
            List<Map.Entry<String, SmartLifecycle>> beans = inPhaseOrder();
            for (int i = beans.size() - 1; i >= 0; i--) {
                String name = beans.get(i).getKey();
                SmartLifecycle bean = beans.get(i).getValue();
                try {
                    if (bean.isRunning()) {
                        stopAndWait(name, bean, leadership);
                    }
                } catch (RuntimeException e) {
                    log.error("election '{}': bean '{}' failed to stop at the end of term {}", election, name,
                            leadership.term(), e);
                }
            }
        }

        private void stopAndWait(String name, SmartLifecycle bean, Leadership leadership) {
            CountDownLatch stopped = new CountDownLatch(1);
            bean.stop(stopped::countDown);
            boolean done;
            try {
                done = stopped.await(stopBound.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                done = false;
            }
            if (!done) {
                log.warn("election '{}': bean '{}' did not finish stopping within {} of the end of term {}; going on",
                        election, name, stopBound, leadership.term());
            }
        }

        private Candidacy awaitCandidacy() {
            boolean interrupted = false;
            while (true) {
                try {
                    ready.await(); // campaign() returns right after starting this thread
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            return candidacy;
        }

        private void publish(LeadershipEvent event) {
            try {
                publisher.publishEvent(event);
            } catch (RuntimeException e) {
                log.warn("election '{}': a listener of {} threw", election, event, e);
            }
        }
    }
}
