package io.latchkey.spring;

import io.latchkey.Leadership;

/**
 * This instance leads the election for a term: published before the election's {@link LeaderOnly} beans
 * are started, on the candidacy's thread, so that a listener can hand the {@link #term() term} to what
 * they write. Immutable.
 */
public final class LeadershipGrantedEvent extends LeadershipEvent {

    private static final long serialVersionUID = 1L;

    /** The event of the grant of {@code leadership}'s term. */
    public LeadershipGrantedEvent(Leadership leadership) {
        super(leadership);
    }

    @Override
    public String toString() {
        return "LeadershipGrantedEvent{" + election() + ", term " + term() + '}';
    }
}
