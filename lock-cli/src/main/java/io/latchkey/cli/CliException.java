package io.latchkey.cli;

/**
 * An error the command line reports as one line on stderr and ends with {@link #exitCode()}.
 *
 * <p>Immutable.
 */
public final class CliException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int exitCode;

    /** An error with its exit code and its one-line message. */
    public CliException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    /** The status latchkey exits with. */
    public int exitCode() {
        return exitCode;
    }
}
