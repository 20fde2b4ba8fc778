package io.latchkey;

import java.time.Duration;
import java.util.Optional;

/**
 * A candidate of an {@link Election}, campaigning on a thread of the library from
 * {@link Election#campaign} until {@link #close()}.
 *
 * <p>Thread-safe. Close it (try-with-resources, or an application's shutdown hook): closing resigns a
 * term it holds, stops campaigning and ends its thread. Closing the client ends it too.
 */
public interface Candidacy extends AutoCloseable {

    /** The election's name. */
    String electionName();

    /** Whether this candidate leads now: it holds a term that is still valid and did not resign it. */
    boolean isLeader();

    /** The term this candidate holds now, if it leads; see {@link #isLeader()}. */
    Optional<Leadership> leadership();

    /**
     * Hands leadership on: ends the current term, tells the listener {@code revoked(RESIGNED)} on the
     * candidacy's thread, then releases the lock, so a waiting candidate is elected within a round trip
     * of that; then stands aside for {@code lease} (the client's option) before it campaigns again.
     * Nothing happens if this candidate does not lead. Returns at once; {@link #isLeader()} is false from
     * now on.
     */
    void resign();

    /**
     * {@link #resign()}, standing aside for {@code standAside} before campaigning again.
     *
     * @throws IllegalArgumentException if {@code standAside} is negative
     */
    void resign(Duration standAside);

    /**
     * Resigns a term this candidate holds and stops campaigning; the listener's
     * {@code revoked(CLOSED)} comes first if it led. Waits for the candidacy's thread to end, for at most
     * twice the client's {@code timeout} (a listener call that runs longer is not waited for).
     * Idempotent; may be called from the listener.
     */
    @Override
    void close();
}
