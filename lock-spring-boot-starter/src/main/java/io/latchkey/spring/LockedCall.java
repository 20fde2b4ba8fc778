package io.latchkey.spring;

import io.latchkey.Lease;
import java.time.Instant;
import java.util.Optional;

/**
 * The lock a {@link DistributedLocked} method runs under, for the method's own code: its lease (to
 * hand {@link Lease#fencingToken()} to the resource it writes) and, with once per slot, the slot.
 *
 * <pre>{@code
 * @DistributedLocked(name = "report:nightly")
 * void nightly() {
 *     store.write(report, LockedCall.current().orElseThrow().lease().fencingToken());
 * }
 * }</pre>
 *
 * <p>Bound to the thread that runs the method, for the duration of the call. Immutable.
 */
public final class LockedCall {

    private static final ThreadLocal<LockedCall> CURRENT = new ThreadLocal<>();

    private final Lease lease;
    private final Instant slot;

    private LockedCall(Lease lease, Instant slot) {
        this.lease = lease;
        this.slot = slot;
    }

    /** The innermost {@link DistributedLocked} call running on this thread, if any. */
    public static Optional<LockedCall> current() {
        return Optional.ofNullable(CURRENT.get());
    }

    /** The lease the method runs under; do not close it, the call does. */
    public Lease lease() {
        return lease;
    }

    /** The schedule slot the call runs for, with once per slot. */
    public Optional<Instant> slot() {
        return Optional.ofNullable(slot);
    }

    /** Runs {@code body} with this call current on the thread, restoring the outer one after. */
    static <T> T bind(Lease lease, Instant slot, Body<T> body) throws Exception {
        LockedCall outer = CURRENT.get();
        CURRENT.set(new LockedCall(lease, slot));
        try {
            return body.run();
        } finally {
            if (outer == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(outer);
            }
        }
    }

    @FunctionalInterface
    interface Body<T> {
        T run() throws Exception;
    }
}
