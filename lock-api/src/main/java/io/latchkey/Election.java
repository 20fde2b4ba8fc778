package io.latchkey;

import java.util.Optional;

/**
 * Leader election on one name: of the candidates that campaign on it, across processes and hosts,
 * at most one leads at any instant, for a term. From {@link LockClient#election(String)}.
 *
 * <p>The election of a name is the lock of that name: a candidate leads while it holds that lock, and
 * a term is one grant of it. A term therefore has everything a lease has: a validity deadline on this
 * process's monotonic clock, {@link Leadership#lost()}, and a fencing token, the {@link Leadership#term()
 * term number}, which grows with every term. It also means that a plain holder of the lock (a
 * {@code latchkey run} of the same name, say) keeps every candidate from leading while it holds it,
 * which is what a job that must not run beside its leader wants.
 *
 * <p>A candidate campaigns on a thread of its own, until its {@link Candidacy} is closed: after it
 * lost a term (a pause, a network cut, a restart of the server) it campaigns again by itself, and
 * after {@link Candidacy#resign()} it stands aside for a while so that another candidate takes over.
 *
 * <p>Thread-safe; handles are cheap and nothing is sent to the backend until a candidate campaigns.
 */
public interface Election {

    /** The name: that of the lock the candidates campaign for. */
    String name();

    /**
     * Starts a candidacy: a thread of the library campaigns for this name until the candidacy is
     * closed, and tells {@code listener} of each term won and each term ended, on that thread, in order.
     *
     * @throws IllegalStateException if the client is closed
     */
    Candidacy campaign(ElectionListener listener);

    /**
     * Who leads now, as the backend records it: the identity the leader's client wrote with its term
     * (see {@link Holder}), or empty if no candidate leads. Observable by any client, one that does not
     * campaign included; one read of the backend, as {@link DistributedLock#inspect()} of the election's
     * lock, which also tells the term (the lock's token). A plain holder of the election's lock shows
     * here too: it keeps every candidate from leading.
     *
     * @throws LockBackendUnavailableException if the backend cannot be reached within {@code timeout}
     * @throws InterruptedException if interrupted while waiting for the backend's answer
     */
    Optional<Holder> leader() throws InterruptedException;
}
