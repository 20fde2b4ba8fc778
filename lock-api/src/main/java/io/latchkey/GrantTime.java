package io.latchkey;

import java.time.Instant;
import java.util.Objects;

/**
 * Since when a lock has been held, as {@link LockState#since()} tells it, and whose clock says so: the
 * backends do not all record the moment of a grant. Redis records it by its own clock in the script that
 * grants; ZooKeeper records when it created the holder's queue node, by its own clock, which is the grant
 * for a request that did not wait and earlier for one that queued; etcd and Kafka keep only what the
 * holder wrote with its request, by the holder's clock.
 *
 * @param at the moment
 * @param source what the moment is, and whose clock
 */
public record GrantTime(Instant at, Source source) {

    public GrantTime {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(source, "source");
    }

    /** What a {@link GrantTime} is, and whose clock tells it. */
    public enum Source {
        /** The grant itself, by the backend's clock. */
        BACKEND_AT_GRANT(true, true),
        /**
         * The request that became the grant, as the backend recorded it by its own clock: the grant came
         * then, or later if the request queued behind other holders.
         */
        BACKEND_AT_REQUEST(true, false),
        /**
         * The request that became the grant, by the holder's own clock, as it wrote it with the request:
         * the grant came then or later, and the holder's clock may differ from the reader's.
         */
        HOLDER_AT_REQUEST(false, false);

        private final boolean backendClock;
        private final boolean grant;

        Source(boolean backendClock, boolean grant) {
            this.backendClock = backendClock;
            this.grant = grant;
        }

        /** Whether the backend's clock tells it (else the holder's). */
        public boolean backendClock() {
            return backendClock;
        }

        /** Whether it is the moment of the grant (else of the request, at or before the grant). */
        public boolean grant() {
            return grant;
        }
    }

    /** {@code <instant> (the grant, by the backend's clock)}, and so on for the other sources. */
    @Override
    public String toString() {
        return at + " (" + (source.grant ? "the grant" : "the request") + ", by the "
                + (source.backendClock ? "backend's" : "holder's") + " clock)";
    }
}
