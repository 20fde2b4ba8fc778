package io.latchkey.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a {@link org.springframework.context.SmartLifecycle} bean only while this application instance
 * leads the named {@link io.latchkey.Election}: the starter starts the bean when the instance is
 * elected and stops it when the term ends. Put it on the bean's class or on its {@code @Bean} method.
 *
 * <pre>{@code
 * @Component
 * @LeaderOnly("feed-consumer")
 * class FeedConsumer implements SmartLifecycle {
 *     public boolean isAutoStartup() { return false; }   // required: the election starts it
 *     public void start() { ... }
 *     public void stop() { ... }
 *     public boolean isRunning() { ... }
 * }
 * }</pre>
 *
 * <p>One candidacy per election name per application context campaigns for all the beans of that
 * name, from the context's start until it closes. When the instance is elected, a
 * {@link LeadershipGrantedEvent} is published (a listener may hand its term, the fencing token, to the
 * beans), then the beans of the name are started in ascending {@link org.springframework.context.Phased
 * phase} order. When the term ends (lost, resigned or the context
 * closing), the running ones are stopped in descending phase order, each stop complete before the
 * next begins, then a {@link LeadershipRevokedEvent} is published; only after that is the election's
 * lock released, so the next leader starts its beans only after these stopped (unless the term was
 * lost, when the lock may already be gone: the beans should fence their writes with the term).
 *
 * <p><b>Auto-startup.</b> The bean's {@code isAutoStartup()} must return {@code false}, or start-up
 * fails naming the bean. Spring's lifecycle would otherwise start it on every instance, standbys
 * included, as it does an endpoint of Spring Integration's {@code SmartLifecycleRoleController} left
 * with {@code autoStartup=true}; overriding the answer would need a proxy that changes the bean's type.
 * Spring still stops a running leader-only bean when the context stops, after the election did.
 * {@code ConfigurableApplicationContext.start()}, called by hand, starts every lifecycle bean, these
 * included; an application with leader-only beans must not call it.
 *
 * <p>Start-up also fails, naming the bean, the value and the rule, for a blank name, for a bean that
 * is not a {@code SmartLifecycle}, for a bean that is not a singleton, and when there is no
 * {@link io.latchkey.LockClient} bean.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LeaderOnly {

    /**
     * The election's name, the name of its lock; a {@code ${property}} placeholder is resolved. Must not
     * be blank.
     */
    String value();
}
