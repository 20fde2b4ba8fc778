package io.latchkey.spring;

import io.latchkey.LockClient;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;
import org.springframework.util.StringValueResolver;

/**
 * The advisor that runs {@link DistributedLocked} methods under their lock, the start-up checks of
 * those methods, and the scheduler decoration that names schedule slots.
 *
 * <p>The advisor's order puts the lock outside a {@code @Transactional} on the same method (whose
 * advisor has the lowest precedence), so the commit happens under the lock and a slot is recorded
 * only after it; a call made inside a transaction that began elsewhere keeps the lock until that
 * transaction completes ({@link TransactionAwareRelease}). The auto-proxy creator is registered here
 * too, so that the annotation works even with {@code spring.aop.auto=false}.
 */
@Configuration(proxyBeanMethods = false)
@Import(LockedMethodsConfiguration.ProxyCreatorRegistrar.class)
class LockedMethodsConfiguration {

    /** The advisor's order: just before {@code @Transactional}'s, which is {@link Ordered#LOWEST_PRECEDENCE}. */
    static final int ORDER = Ordered.LOWEST_PRECEDENCE - 100;

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static DefaultPointcutAdvisor latchkeyLockedMethodAdvisor(ObjectProvider<LockClient> client, BeanFactory beanFactory,
            ObjectProvider<RunningCalls> running) {
        LockedMethodInterceptor interceptor = new LockedMethodInterceptor(client, beanFactory, resolver(beanFactory),
                running.getObject());
        DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(
                new AnnotationMatchingPointcut(null, DistributedLocked.class, true), interceptor);
        advisor.setOrder(ORDER);
        return advisor;
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static RunningCalls latchkeyRunningCalls(ObjectProvider<LockClient> client) {
        return new RunningCalls(client);
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static LockedMethodValidator latchkeyLockedMethodValidator(BeanFactory beanFactory) {
        return new LockedMethodValidator((ListableBeanFactory) beanFactory, resolver(beanFactory));
    }

    /** Runs last, so it decorates whatever scheduler the application's own configurers chose. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static SchedulingConfigurer latchkeySlotCapturingConfigurer() {
        return new SlotConfigurer();
    }

    private static StringValueResolver resolver(BeanFactory beanFactory) {
        ConfigurableBeanFactory factory = (ConfigurableBeanFactory) beanFactory;
        return value -> value == null ? null : factory.resolveEmbeddedValue(value);
    }

    static final class SlotConfigurer implements SchedulingConfigurer, Ordered {

        @Override
        public void configureTasks(ScheduledTaskRegistrar registrar) {
            if (registrar.getScheduler() != null && !(registrar.getScheduler() instanceof SlotCapturingScheduler)) {
                registrar.setTaskScheduler(new SlotCapturingScheduler(registrar.getScheduler()));
            }
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }
    }

    static final class ProxyCreatorRegistrar implements ImportBeanDefinitionRegistrar {

        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
        }
    }
}
