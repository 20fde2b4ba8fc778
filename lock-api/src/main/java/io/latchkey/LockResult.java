package io.latchkey;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What became of a task run under a lock by {@link DistributedLock#runLocked} or
 * {@link DistributedLock#callLocked}: whether it ran, its value or exception, and why it did not run.
 *
 * <p>Immutable and thread-safe.
 *
 * @param <T> the type of the task's value ({@link Void} for {@code runLocked})
 */
public final class LockResult<T> {

    /** Why the task ran or did not. */
    public enum Outcome {
        /** The task ran to completion under a valid lease; {@link #value()} holds its value. */
        RAN,
        /** The task ran under a valid lease and threw; {@link #exception()} holds what it threw. */
        FAILED,
        /** The lock stayed held by someone else for the whole wait; the task did not run. */
        NOT_ACQUIRED,
        /**
         * The lease was lost: before the task started (it did not run) or while it ran ({@link #ran()}
         * is true, and its value or exception is kept). {@link #loss()} says why.
         */
        LOST,
        /** The backend records the request's slot, or a later one, as completed; the task did not run. */
        SLOT_DONE
    }

    private final Outcome outcome;
    private final boolean ran;
    private final T value;
    private final Exception exception;
    private final LockLostException loss;
    private final Long fencingToken;
    private final Instant recordedSlot;

    private LockResult(Outcome outcome, boolean ran, T value, Exception exception, LockLostException loss,
            Long fencingToken, Instant recordedSlot) {
        this.outcome = Objects.requireNonNull(outcome, "outcome");
        this.ran = ran;
        this.value = value;
        this.exception = exception;
        this.loss = loss;
        this.fencingToken = fencingToken;
        this.recordedSlot = recordedSlot;
    }

    static {
        // Built only by the shared layer, through the factory it is handed here: no public way to make one.
        io.latchkey.internal.LockResults.register(new io.latchkey.internal.LockResults.Factory() {
            @Override
            public <T> LockResult<T> ran(long token, T value) {
                return new LockResult<>(Outcome.RAN, true, value, null, null, token, null);
            }

            @Override
            public <T> LockResult<T> failed(long token, Exception exception) {
                return new LockResult<>(Outcome.FAILED, true, null, Objects.requireNonNull(exception, "exception"), null,
                        token, null);
            }

            @Override
            public <T> LockResult<T> notAcquired() {
                return new LockResult<>(Outcome.NOT_ACQUIRED, false, null, null, null, null, null);
            }

            @Override
            public <T> LockResult<T> lost(long token, LockLostException loss, boolean ran, T value, Exception exception) {
                return new LockResult<>(Outcome.LOST, ran, value, exception, Objects.requireNonNull(loss, "loss"), token,
                        null);
            }

            @Override
            public <T> LockResult<T> slotDone(long token, Instant recordedSlot) {
                return new LockResult<>(Outcome.SLOT_DONE, false, null, null, null, token,
                        Objects.requireNonNull(recordedSlot));
            }
        });
    }

    public Outcome outcome() {
        return outcome;
    }

    /** Whether the task was started (it may then still have failed or lost its lease). */
    public boolean ran() {
        return ran;
    }

    /** The task's value, or {@code null} if it did not return one. */
    public T value() {
        return value;
    }

    /** What the task threw, if it threw. */
    public Optional<Exception> exception() {
        return Optional.ofNullable(exception);
    }

    /** Why the lease was lost, for {@link Outcome#LOST}. */
    public Optional<LockLostException> loss() {
        return Optional.ofNullable(loss);
    }

    /** The fencing token of the lease the call held, if it got the lock. */
    public OptionalLong fencingToken() {
        return fencingToken == null ? OptionalLong.empty() : OptionalLong.of(fencingToken);
    }

    /** For {@link Outcome#SLOT_DONE}: the last completed slot the backend records. */
    public Optional<Instant> recordedSlot() {
        return Optional.ofNullable(recordedSlot);
    }

    @Override
    public String toString() {
        return "LockResult{" + outcome + (ran ? ", ran" : "")
                + (exception != null ? ", exception=" + exception : "")
                + (loss != null ? ", loss=" + loss.getMessage() : "")
                + (recordedSlot != null ? ", recordedSlot=" + recordedSlot : "")
                + (fencingToken != null ? ", token=" + fencingToken : "") + '}';
    }
}
