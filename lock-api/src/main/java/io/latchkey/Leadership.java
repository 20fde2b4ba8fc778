package io.latchkey;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * One term of a leader: a lease on the election's lock, seen as a term. Valid from its grant until
 * the earliest of its end (resignation, close), {@link #lost()}, and its validity deadline; a term is
 * never valid again once it is not.
 *
 * <p>Thread-safe.
 */
public interface Leadership {

    /** The election's name. */
    String electionName();

    /**
     * The term number: the fencing token of the grant, greater than that of every earlier term of this
     * election (and of every earlier grant of its lock). Hand it to what the leader writes, so that a
     * resource refuses the writes of an older leader that does not know yet that its term ended.
     */
    long term();

    /** Whether the term is still valid now; see {@link Lease#isValid()}. */
    boolean isValid();

    /**
     * Throws unless the term is still valid.
     *
     * @throws LockLostException if the term was lost
     * @throws IllegalStateException if the term ended by resignation or close
     */
    void ensureValid();

    /** How long the term stays valid without a further confirmation from the backend; zero once ended. */
    Duration remaining();

    /** Completes when the term is lost, as {@link Lease#lost()}; never when it ends by resignation or close. */
    CompletionStage<LockLostException> lost();
}
