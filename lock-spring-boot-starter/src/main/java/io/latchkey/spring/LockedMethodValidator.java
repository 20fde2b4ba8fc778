package io.latchkey.spring;

import io.latchkey.LockClient;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringValueResolver;

/**
 * Fails start-up for a {@link DistributedLocked} method that would run without its lock: one the proxy
 * cannot reach, one whose attributes do not parse, or any at all when there is no {@link LockClient}.
 * A lock that silently does nothing is the worst outcome, so these are errors, not warnings.
 */
final class LockedMethodValidator implements BeanPostProcessor, SmartInitializingSingleton {

    private final ListableBeanFactory beanFactory;
    private final StringValueResolver resolver;
    private final Map<Class<?>, List<String>> checked = new ConcurrentHashMap<>();

    LockedMethodValidator(ListableBeanFactory beanFactory, StringValueResolver resolver) {
        this.beanFactory = beanFactory;
        this.resolver = resolver;
    }

    @Override
    public Object postProcessBeforeInitialization(Object bean, String beanName) {
        Class<?> type = ClassUtils.getUserClass(bean);
        try {
            checked.computeIfAbsent(type, this::check);
        } catch (IllegalStateException e) {
            throw new BeanInitializationException("bean '" + beanName + "': " + e.getMessage(), e);
        }
        return bean;
    }

    private List<String> check(Class<?> type) {
        List<String> found = new ArrayList<>();
        ReflectionUtils.doWithMethods(type, method -> {
            DistributedLocked annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLocked.class);
            if (annotation != null) {
                LockedMethod.parse(method, annotation, resolver);
                found.add(type.getName() + "." + method.getName());
            }
        }, (Method m) -> !m.isBridge() && !m.isSynthetic() && m.getDeclaringClass() != Object.class);
        return found;
    }

    @Override
    public void afterSingletonsInstantiated() {
        List<String> methods = checked.values().stream().flatMap(List::stream).sorted().toList();
        if (!methods.isEmpty() && beanFactory.getBeanNamesForType(LockClient.class, true, false).length == 0) {
            throw new IllegalStateException("@DistributedLocked methods " + methods + " need a LockClient bean, and there is"
                    + " none: set latchkey.uri (such as redis://localhost:6379), give the application a RedissonClient,"
                    + " CuratorFramework or jetcd Client bean with the matching Latchkey backend, or define a LockClient");
        }
    }
}
