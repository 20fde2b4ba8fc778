package io.latchkey.spring;

import io.latchkey.Leadership;
import io.latchkey.Revocation;
import java.util.Objects;

/**
 * This instance's term of the election ended: published after the election's {@link LeaderOnly} beans
 * stopped and before the term's lock is released, on the candidacy's thread. Immutable.
 */
public final class LeadershipRevokedEvent extends LeadershipEvent {

    private static final long serialVersionUID = 1L;

    private final Revocation reason;

    /** The event of the end of {@code leadership}'s term, for {@code reason}. */
    public LeadershipRevokedEvent(Leadership leadership, Revocation reason) {
        super(leadership);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    /** Why the term ended: lost, resigned, or closed with the context. */
    public Revocation reason() {
        return reason;
    }

    @Override
    public String toString() {
        return "LeadershipRevokedEvent{" + election() + ", term " + term() + ", " + reason + '}';
    }
}
