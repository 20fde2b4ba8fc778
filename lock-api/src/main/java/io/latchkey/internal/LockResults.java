package io.latchkey.internal;

import io.latchkey.LockLostException;
import io.latchkey.LockResult;
import java.lang.invoke.MethodHandles;
import java.time.Instant;

/**
 * How the shared layer builds a {@link LockResult}, which has no public constructor or factory: the
 * class hands this one its {@link Factory} when it is initialized, which the first call here brings
 * about.
 *
 * <p>Thread-safe: class initialization publishes the factory.
 */
public final class LockResults {

    /** What {@link LockResult} registers; each method builds the result of one {@link LockResult.Outcome}. */
    public interface Factory {

        <T> LockResult<T> ran(long token, T value);

        <T> LockResult<T> failed(long token, Exception exception);

        <T> LockResult<T> notAcquired();

        <T> LockResult<T> lost(long token, LockLostException loss, boolean ran, T value, Exception exception);

        <T> LockResult<T> slotDone(long token, Instant recordedSlot);
    }

    private static volatile Factory factory;

    private LockResults() {
    }

    /** Called once, from {@link LockResult}'s initialization, and from nowhere else. */
    public static void register(Factory f) {
        Class<?> caller = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE).getCallerClass();
        if (caller != LockResult.class) {
            throw new IllegalStateException("only LockResult registers its factory, not " + caller.getName());
        }
        if (factory != null) {
            throw new IllegalStateException("LockResult's factory is registered already");
        }
        factory = f;
    }

    /** The task completed under a valid lease. */
    static <T> LockResult<T> ran(long token, T value) {
        return factory().ran(token, value);
    }

    /** The task threw under a valid lease. */
    static <T> LockResult<T> failed(long token, Exception exception) {
        return factory().failed(token, exception);
    }

    /** The lock was not acquired. */
    static <T> LockResult<T> notAcquired() {
        return factory().notAcquired();
    }

    /** The lease was lost, before the task ran or while it ran. */
    static <T> LockResult<T> lost(long token, LockLostException loss, boolean ran, T value, Exception exception) {
        return factory().lost(token, loss, ran, value, exception);
    }

    /** The slot was already done. */
    static <T> LockResult<T> slotDone(long token, Instant recordedSlot) {
        return factory().slotDone(token, recordedSlot);
    }

    private static Factory factory() {
        Factory f = factory;
        if (f == null) {
            try {
                MethodHandles.lookup().ensureInitialized(LockResult.class);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException("cannot initialize LockResult", e);
            }
            f = factory;
        }
        return f;
    }
}
