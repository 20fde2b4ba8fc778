package io.latchkey;

import io.latchkey.spi.Durations;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * The settings of one call that takes a lock: how long to wait, and, for the grant it gets, how long
 * it may hold the lock at most and must hold it at least, and the schedule slot it runs for.
 *
 * <ul>
 *   <li>{@code wait} (default zero): how long to wait for a holder to release the lock.</li>
 *   <li>{@code atMost}: the lease ends no later than acquisition + {@code atMost}, even though renewal
 *       could go on, so that a hung task cannot hold the lock forever: the lease turns invalid,
 *       {@link Lease#lost()} completes with that reason and the lock is released in the background.
 *       Measured on this process's monotonic clock from before the acquire request was sent.</li>
 *   <li>{@code atLeast}: closing the lease earlier keeps the lock taken until acquisition +
 *       {@code atLeast}, measured on this process's monotonic clock from the moment the grant
 *       returned, so that a node whose schedule fires a little later finds the lock still held. Where
 *       the backend supports it (see {@link io.latchkey.spi.BackendLease#releaseAfter}) the backend's
 *       own expiry enforces it, so it also holds if this process exits; otherwise this client keeps
 *       the lock until then, which ends early if the client is closed or the process exits.</li>
 *   <li>{@code slot}: the schedule slot, for {@link DistributedLock#runLocked}/{@code callLocked} only:
 *       the task runs at most once per slot across every client of the lock (see there).</li>
 *   <li>{@code interruptOnLoss} (default true): a task run under the lock has its thread interrupted
 *       when the lease is lost.</li>
 *   <li>{@code markSlotOnFailure} (default false): whether a task that throws still marks its slot as
 *       completed.</li>
 * </ul>
 *
 * <p>The bounds apply to a new grant; a nested lease (the holding thread taking the lock again) shares
 * the bounds of the grant it nests in. Instances are immutable and thread-safe.
 */
public final class LockRequest {

    private final Duration wait;
    private final Duration atMost;
    private final Duration atLeast;
    private final Instant slot;
    private final boolean interruptOnLoss;
    private final boolean markSlotOnFailure;

    private LockRequest(Builder b) {
        this.wait = b.wait;
        this.atMost = b.atMost;
        this.atLeast = b.atLeast;
        this.slot = b.slot;
        this.interruptOnLoss = b.interruptOnLoss;
        this.markSlotOnFailure = b.markSlotOnFailure;
        if (atMost != null && atLeast != null && atLeast.compareTo(atMost) > 0) {
            throw new IllegalArgumentException("atLeast must not exceed atMost: atLeast=" + Durations.format(atLeast)
                    + ", atMost=" + Durations.format(atMost));
        }
    }

    /** A request that waits {@code wait} and has no bounds. */
    public static LockRequest waiting(Duration wait) {
        return builder().wait(wait).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder that starts from this request. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.wait = wait;
        b.atMost = atMost;
        b.atLeast = atLeast;
        b.slot = slot;
        b.interruptOnLoss = interruptOnLoss;
        b.markSlotOnFailure = markSlotOnFailure;
        return b;
    }

    public Duration waitTime() {
        return wait;
    }

    public Optional<Duration> atMost() {
        return Optional.ofNullable(atMost);
    }

    public Optional<Duration> atLeast() {
        return Optional.ofNullable(atLeast);
    }

    public Optional<Instant> slot() {
        return Optional.ofNullable(slot);
    }

    public boolean interruptOnLoss() {
        return interruptOnLoss;
    }

    public boolean markSlotOnFailure() {
        return markSlotOnFailure;
    }

    @Override
    public String toString() {
        return "LockRequest{wait=" + Durations.format(wait)
                + (atMost != null ? ", atMost=" + Durations.format(atMost) : "")
                + (atLeast != null ? ", atLeast=" + Durations.format(atLeast) : "")
                + (slot != null ? ", slot=" + slot : "")
                + ", interruptOnLoss=" + interruptOnLoss + ", markSlotOnFailure=" + markSlotOnFailure + '}';
    }

    /** Builds a {@link LockRequest}. Not thread-safe. */
    public static final class Builder {

        private Duration wait = Duration.ZERO;
        private Duration atMost;
        private Duration atLeast;
        private Instant slot;
        private boolean interruptOnLoss = true;
        private boolean markSlotOnFailure;

        private Builder() {
        }

        public Builder wait(Duration wait) {
            Objects.requireNonNull(wait, "wait");
            if (wait.isNegative()) {
                throw new IllegalArgumentException("wait must not be negative: " + Durations.format(wait));
            }
            this.wait = wait;
            return this;
        }

        public Builder atMost(Duration atMost) {
            this.atMost = positive("atMost", atMost);
            return this;
        }

        public Builder atLeast(Duration atLeast) {
            this.atLeast = positive("atLeast", atLeast);
            return this;
        }

        public Builder slot(Instant slot) {
            this.slot = Objects.requireNonNull(slot, "slot");
            return this;
        }

        public Builder interruptOnLoss(boolean interruptOnLoss) {
            this.interruptOnLoss = interruptOnLoss;
            return this;
        }

        public Builder markSlotOnFailure(boolean markSlotOnFailure) {
            this.markSlotOnFailure = markSlotOnFailure;
            return this;
        }

        /**
         * Builds the request.
         *
         * @throws IllegalArgumentException if {@code atLeast} exceeds {@code atMost}
         */
        public LockRequest build() {
            return new LockRequest(this);
        }

        private static Duration positive(String what, Duration d) {
            Objects.requireNonNull(d, what);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive: " + Durations.format(d));
            }
            return d;
        }
    }
}
