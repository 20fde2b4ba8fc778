package io.latchkey.spring;

import io.latchkey.DistributedLock;
import io.latchkey.LockClient;
import io.latchkey.LockLostException;
import io.latchkey.LockNotAcquiredException;
import io.latchkey.LockRequest;
import io.latchkey.LockResult;
import java.lang.reflect.Method;
import java.lang.reflect.UndeclaredThrowableException;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.BridgeMethodResolver;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringValueResolver;

/**
 * Runs a {@link DistributedLocked} method under its lock with
 * {@link DistributedLock#callLocked}, and, inside a transaction, keeps the lock until the transaction
 * completes.
 *
 * <p>The lock client is looked up at the first call, not when the proxy is built, so that the
 * advisor does not pull the backend's beans into existence early. Thread-safe.
 */
final class LockedMethodInterceptor implements MethodInterceptor {

    private static final Logger log = LoggerFactory.getLogger(LockedMethodInterceptor.class);
    private static final boolean TRANSACTIONS = ClassUtils.isPresent(
            "org.springframework.transaction.support.TransactionSynchronizationManager", LockedMethodInterceptor.class.getClassLoader());
    private static final Map<Class<?>, Object> ZEROS = Map.of(boolean.class, false, char.class, '\0', byte.class, (byte) 0,
            short.class, (short) 0, int.class, 0, long.class, 0L, float.class, 0f, double.class, 0d);

    private final ObjectProvider<LockClient> client;
    private final BeanFactory beanFactory;
    private final StringValueResolver resolver;
    private final Map<Method, LockedMethod> methods = new ConcurrentHashMap<>();
    private final RunningCalls running;

    LockedMethodInterceptor(ObjectProvider<LockClient> client, BeanFactory beanFactory, StringValueResolver resolver,
            RunningCalls running) {
        this.client = client;
        this.running = running;
        this.beanFactory = beanFactory;
        this.resolver = resolver;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Class<?> targetClass = invocation.getThis() != null ? AopUtils.getTargetClass(invocation.getThis()) : null;
        Method method = BridgeMethodResolver.findBridgedMethod(AopUtils.getMostSpecificMethod(invocation.getMethod(), targetClass));
        LockedMethod locked = methods.computeIfAbsent(method, m -> LockedMethod.parse(m,
                AnnotatedElementUtils.findMergedAnnotation(m, DistributedLocked.class), resolver));
        String name = locked.lockName(invocation.getThis(), invocation.getArguments(), beanFactory);
        DistributedLock lock = locked.lockOf(client.getObject(), name);
        LockRequest request = locked.request(Instant.now());
        boolean inTransaction = TRANSACTIONS && TransactionAwareRelease.active();
        LockResult<Object> result;
        try {
            result = lock.callLocked(request, lease -> {
                if (inTransaction) {
                    TransactionAwareRelease.holdUntilCompletion(lock);
                }
                running.enter();
                try {
                    return LockedCall.bind(lease, request.slot().orElse(null), () -> proceed(invocation));
                } finally {
                    running.exit();
                }
            });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            for (Class<?> declared : method.getExceptionTypes()) {
                if (declared.isAssignableFrom(InterruptedException.class)) {
                    throw e;
                }
            }
            log.debug("interrupted while waiting for lock '{}' of {}; handled as not acquired", name, method);
            return notRun(locked, name, request, "interrupted while waiting");
        }
        switch (result.outcome()) {
            case RAN:
                return result.value();
            case FAILED:
                throw unwrap(result.exception().orElseThrow());
            case NOT_ACQUIRED:
                return notRun(locked, name, request, "held by another holder");
            case SLOT_DONE:
                log.debug("skipped {}: lock '{}' records slot {} as done, this run is for {}", method, name,
                        result.recordedSlot().orElseThrow(), request.slot().orElseThrow());
                return zero(method);
            case LOST:
            default:
                LockLostException loss = result.loss().orElseThrow();
                LockLostException thrown = new LockLostException(name, "lock '" + name + "' was lost "
                        + (result.ran() ? "while " : "before ") + method.getName() + " ran, so another instance may run it"
                        + " at the same time: " + loss.getMessage(), loss);
                result.exception().ifPresent(thrown::addSuppressed);
                throw thrown;
        }
    }

    private static Object proceed(MethodInvocation invocation) throws Exception {
        try {
            return invocation.proceed();
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t);
        }
    }

    private static Throwable unwrap(Exception e) {
        return e instanceof UndeclaredThrowableException u && u.getUndeclaredThrowable() != null ? u.getUndeclaredThrowable() : e;
    }

    private static Object notRun(LockedMethod locked, String name, LockRequest request, String why) {
        if (locked.annotation().onNotAcquired() == DistributedLocked.NotAcquired.THROW) {
            throw new LockNotAcquiredException(name, request.waitTime());
        }
        log.debug("skipped {}: lock '{}' not acquired within {} ({})", locked.method(), name, request.waitTime(), why);
        return zero(locked.method());
    }

    private static Object zero(Method method) {
        return ZEROS.get(method.getReturnType());
    }
}
