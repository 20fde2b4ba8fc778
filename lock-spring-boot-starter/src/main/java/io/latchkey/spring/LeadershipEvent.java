package io.latchkey.spring;

import io.latchkey.Leadership;
import org.springframework.context.ApplicationEvent;

/**
 * A change of this application instance's leadership of an election that {@link LeaderOnly} beans
 * campaign in: {@link LeadershipGrantedEvent} or {@link LeadershipRevokedEvent}. The events of one
 * election are published on its candidacy's thread, in order, granted and revoked alternating.
 *
 * <p>Immutable; the term it carries changes its validity as the term ends.
 */
public abstract sealed class LeadershipEvent extends ApplicationEvent permits LeadershipGrantedEvent, LeadershipRevokedEvent {

    private static final long serialVersionUID = 1L;

    /** Creates the event of a change of {@code leadership}'s term. */
    LeadershipEvent(Leadership leadership) {
        super(leadership);
    }

    /** The term, as the election told it. */
    public Leadership leadership() {
        return (Leadership) getSource();
    }

    /** The election's name. */
    public String election() {
        return leadership().electionName();
    }

    /** The term number: the fencing token of the term's grant. */
    public long term() {
        return leadership().term();
    }
}
