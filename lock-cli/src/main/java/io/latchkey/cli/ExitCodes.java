package io.latchkey.cli;

/**
 * The exit statuses of {@code latchkey}, the table the README documents.
 *
 * <p>Codes of our own come from {@code sysexits.h} where one fits, so that schedulers that already
 * know them (a {@code 75} is retried by many) do the right thing; the rest follow the shell's
 * conventions ({@code 126}, {@code 127}, {@code 128+N}), so that a wrapped command looks, to whoever
 * runs it, like the command itself.
 */
public final class ExitCodes {

    /** Everything went well; with {@code run} and {@code elect}, latchkey exits with the command's own status. */
    public static final int OK = 0;
    /** Something unexpected inside latchkey; the message says what. */
    public static final int FAILURE = 1;
    /**
     * {@code latchkey leader}: no candidate leads the election; {@code latchkey status}: nobody holds the
     * lock (a state, not an error, as {@code systemctl is-active}'s 3).
     */
    public static final int NONE = 3;
    /** Bad input: options, duration, URI, unknown backend, missing {@code --} or command (picocli's convention). */
    public static final int USAGE = 2;
    /** The backend could not be reached, or failed, before the command started ({@code EX_UNAVAILABLE}). */
    public static final int BACKEND_UNAVAILABLE = 69;
    /** The lease was lost while the command ran; the command was stopped ({@code EX_SOFTWARE}: not the command's fault, not ours to hide). */
    public static final int LOCK_LOST = 70;
    /** The lock stayed held by someone else for the whole wait ({@code EX_TEMPFAIL}: try again later); see {@code --conflict-exit-code}. */
    public static final int CONFLICT = 75;
    /** The command exists but cannot be executed (shell convention). */
    public static final int NOT_EXECUTABLE = 126;
    /** The command was not found (shell convention); the lock was released. */
    public static final int NOT_FOUND = 127;
    /** Added to the signal number when the command, or latchkey while waiting or standing by, ended by a signal. */
    public static final int SIGNAL_BASE = 128;

    private ExitCodes() {
    }
}
