package io.latchkey.spring;

import io.latchkey.LockRequest;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.time.Instant;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.common.TemplateParserContext;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.StringValueResolver;

/**
 * What a {@link DistributedLocked} method asks for, parsed once: the name template, the request's
 * durations and, with once per slot, the schedule the slots come from.
 *
 * <p>Immutable and thread-safe; the name is evaluated per call.
 */
final class LockedMethod {

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

    private final Method method;
    private final DistributedLocked annotation;
    private final Expression name;
    private final LockRequest request;
    private final ScheduleSlots slots;

    private LockedMethod(Method method, DistributedLocked annotation, Expression name, LockRequest request, ScheduleSlots slots) {
        this.method = method;
        this.annotation = annotation;
        this.name = name;
        this.request = request;
        this.slots = slots;
    }

    /**
     * Parses the annotation of {@code method}.
     *
     * @throws IllegalStateException naming the method and what is wrong with it
     */
    static LockedMethod parse(Method method, DistributedLocked annotation, StringValueResolver resolver) {
        String where = "@DistributedLocked method " + method.getDeclaringClass().getName() + "." + method.getName();
        int modifiers = method.getModifiers();
        if (Modifier.isPrivate(modifiers) || Modifier.isFinal(modifiers) || Modifier.isStatic(modifiers)) {
            throw new IllegalStateException(where + " is " + Modifier.toString(modifiers & (Modifier.PRIVATE | Modifier.FINAL
                    | Modifier.STATIC)) + ": a Spring proxy cannot intercept it, so it would run without the lock;"
                    + " make it a non-final instance method that is not private");
        }
        Expression name;
        try {
            name = PARSER.parseExpression(resolver.resolveStringValue(annotation.name()), new TemplateParserContext());
        } catch (ParseException e) {
            throw new IllegalStateException(where + ": the lock name '" + annotation.name() + "' does not parse: "
                    + e.getMessage() + "; write expressions as #{...}, such as job:report:#{#userId}", e);
        }
        LockRequest.Builder b = LockRequest.builder()
                .interruptOnLoss(annotation.interruptOnLoss())
                .markSlotOnFailure(annotation.markSlotOnFailure());
        try {
            Duration wait = duration(where, "waitFor", annotation.waitFor(), resolver);
            Duration atMost = duration(where, "lockAtMostFor", annotation.lockAtMostFor(), resolver);
            Duration atLeast = duration(where, "lockAtLeastFor", annotation.lockAtLeastFor(), resolver);
            if (wait != null) {
                b.wait(wait);
            }
            if (atMost != null) {
                b.atMost(atMost);
            }
            if (atLeast != null) {
                b.atLeast(atLeast);
            }
            if (annotation.oncePerSlot() && annotation.mode() != DistributedLocked.Mode.LOCK) {
                throw new IllegalArgumentException("oncePerSlot needs mode LOCK, and mode is " + annotation.mode()
                        + ": schedule slots are recorded with a lock, not with a read-write lock");
            }
            ScheduleSlots slots = annotation.oncePerSlot() ? ScheduleSlots.of(method, resolver) : null;
            return new LockedMethod(method, annotation, name, b.build(), slots);
        } catch (IllegalArgumentException | java.time.DateTimeException e) {
            throw new IllegalStateException(where + ": " + e.getMessage(), e);
        }
    }

    /** The lock of {@code name} on {@code client} in this method's {@link DistributedLocked#mode()}. */
    io.latchkey.DistributedLock lockOf(io.latchkey.LockClient client, String name) {
        return switch (annotation.mode()) {
            case LOCK -> client.lock(name);
            case READ -> client.readWriteLock(name).readLock();
            case WRITE -> client.readWriteLock(name).writeLock();
        };
    }

    private static Duration duration(String where, String attribute, String value, StringValueResolver resolver) {
        String resolved = resolver.resolveStringValue(value);
        if (resolved == null || resolved.isBlank()) {
            return null;
        }
        try {
            return DurationStyle.detectAndParse(resolved.trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(attribute + " '" + value + "' is not a duration; write 500ms, 5s, 2m, PT5S"
                    + " or milliseconds", e);
        }
    }

    Method method() {
        return method;
    }

    DistributedLocked annotation() {
        return annotation;
    }

    /** The lock name for a call with {@code arguments} on {@code target}. */
    String lockName(Object target, Object[] arguments, BeanFactory beanFactory) {
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(target, method, arguments, PARAMETER_NAMES);
        if (beanFactory != null) {
            context.setBeanResolver(new BeanFactoryResolver(beanFactory));
        }
        String value = name.getValue(context, String.class);
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("the lock name '" + annotation.name() + "' of " + method
                    + " evaluated to an empty name for these arguments");
        }
        return value;
    }

    /** The request of one call: with once per slot, for the slot of the run on this thread. */
    LockRequest request(Instant now) {
        if (slots == null) {
            return request;
        }
        return request.toBuilder().slot(slots.slot(SlotCapturingScheduler.currentScheduledTime(), now)).build();
    }

    @Override
    public String toString() {
        return "LockedMethod{" + method + ", " + request + (slots != null ? ", slots of " + slots : "") + '}';
    }
}
