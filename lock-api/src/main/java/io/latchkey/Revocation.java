package io.latchkey;

/** Why a term of an election ended; see {@link ElectionListener#revoked}. */
public enum Revocation {
    /**
     * The term was lost: the backend ended it, or no confirmation came before its validity deadline
     * (a pause, a network cut, a restart of the server). The candidate campaigns again.
     */
    LOST,
    /** The leader resigned ({@link Candidacy#resign()}); it stands aside, then campaigns again. */
    RESIGNED,
    /** The candidacy was closed, or its client: it campaigns no more. */
    CLOSED
}
