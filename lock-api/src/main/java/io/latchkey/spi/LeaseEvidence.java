package io.latchkey.spi;

import java.time.Duration;

/**
 * Where a backend reports what it knows about a lease it holds; the shared layer turns it into the
 * validity deadline and the loss signal. Thread-safe; calls after a loss or release are ignored.
 */
public interface LeaseEvidence {

    /**
     * The backend confirmed ownership, and keeps the lock for a silent holder for at least
     * {@code serverTtl} from some moment after {@code sentAtNanos}.
     *
     * @param sentAtNanos {@link System#nanoTime()} taken before the request that got the confirmation
     *     was sent, so it precedes the server's renewal
     * @param serverTtl the time the server keeps the lock from that renewal, as the server reports it
     *     where it can
     */
    void confirmed(long sentAtNanos, Duration serverTtl);

    /** The lock may have been given to someone else. */
    void lost(String reason, Throwable cause);
}
