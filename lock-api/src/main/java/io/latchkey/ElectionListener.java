package io.latchkey;

/**
 * What a candidate is told: each term won and each term ended, in order, on its candidacy's own
 * thread. The two calls alternate, starting with {@link #elected}.
 *
 * <p>Return promptly: while a call runs, the candidacy can tell nothing else. Start the leader's
 * work elsewhere on {@code elected} and stop it on {@code revoked}; the work itself can ask
 * {@link Leadership#isValid()} and hand {@link Leadership#term()} to the resources it writes, so that
 * they refuse an older leader.
 */
public interface ElectionListener {

    /** This candidate leads, for {@code leadership}'s term. */
    void elected(Leadership leadership);

    /**
     * The term of {@code leadership} ended, for the reason {@code why}; it is no longer valid. When the
     * term was lost, this call comes at its validity deadline at the latest, and at once when this
     * process wakes from a pause that outlasted it; before the next {@code elected}, always. The term's
     * lock is released only after this call returns, so no other candidate leads while it runs, unless
     * the term was lost.
     */
    void revoked(Leadership leadership, Revocation why);
}
