package io.latchkey.example.memory;

import java.util.Locale;

/**
 * A deliberate defect of the server or the backend, so that the kit's own tests can show that each
 * contract test fails against the backend it is meant to catch. A real backend has none of these;
 * the honest variant is {@link #NONE}.
 *
 * <p>The server takes it as {@code --flaw=<name>}, the backend as the option {@code flaw=<name>}; each
 * side ignores the flaws of the other, so one name can be given to both.
 */
public enum Flaw {
    /** Neither side has a defect. */
    NONE,
    /** Backend: reports three times the TTL the server keeps, so a cut holder stays valid too long. */
    LATE_LOSS,
    /** Backend: reports the grant but none of its renewals, so validity ends at lease - safetyMargin. */
    UNRENEWED,
    /** Backend: an interrupted acquire does not withdraw its request, which the server later grants. */
    ABANDONED_WAITER,
    /** Server: grants a freed lock to the newest waiter instead of the oldest. */
    OUT_OF_ORDER,
    /** Server: never removes the state of a released lock. */
    NO_CLEANUP,
    /** Server: removes a released lock with its token counter, so the next grant starts again at 1. */
    TOKEN_RESET,
    /** Server: gives every semaphore one slot more than its permits, so N + 1 holders are valid at once. */
    EXTRA_PERMIT;

    /** The flaw named {@code text} ({@code late-loss}, {@code out-of-order}, ...), or {@code NONE} for {@code null}. */
    public static Flaw parse(String text) {
        if (text == null || text.isEmpty()) {
            return NONE;
        }
        try {
            return valueOf(text.toUpperCase(Locale.ROOT).replace('-', '_'));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown flaw '" + text + "': use none, late-loss, unrenewed,"
                    + " abandoned-waiter, out-of-order, no-cleanup, token-reset or extra-permit", e);
        }
    }

    /** The name as written in options and flags: {@code late-loss}. */
    public String optionValue() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
