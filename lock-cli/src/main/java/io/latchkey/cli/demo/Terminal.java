package io.latchkey.cli.demo;

import java.io.PrintStream;

/**
 * The demo's view: narrated lines, and on a terminal a status line kept at the bottom and redrawn in
 * place. Colours and redrawing only when stdout is a terminal ({@code System.console()} is present),
 * plain lines otherwise, so that a log or a pipe gets readable text. Thread-safe.
 */
final class Terminal {

    static final String GREEN = "32";
    static final String RED = "31";
    static final String YELLOW = "33";
    static final String CYAN = "36";
    static final String BOLD = "1";

    private final PrintStream out;
    private final boolean ansi;
    private final long startNanos;
    private String status = "";

    Terminal(PrintStream out, boolean ansi, long startNanos) {
        this.out = out;
        this.ansi = ansi;
        this.startNanos = startNanos;
    }

    static boolean isTerminal() {
        return System.console() != null && System.getenv("TERM") != null && !"dumb".equals(System.getenv("TERM"));
    }

    /** A narrated line, stamped with the demo's elapsed time. */
    synchronized void say(String colour, String text) {
        clearStatus();
        String stamp = String.format("%6.1fs  ", (System.nanoTime() - startNanos) / 1e9);
        out.println(stamp + paint(colour, text));
        drawStatus();
        out.flush();
    }

    /** A line without a time stamp (headings, the summary). */
    synchronized void plain(String colour, String text) {
        clearStatus();
        out.println(paint(colour, text));
        drawStatus();
        out.flush();
    }

    /** Replaces the status line; on a plain stream it is printed only when {@code force}. */
    synchronized void status(String text, boolean force) {
        status = text;
        if (ansi) {
            out.print("\r\033[K" + paint(CYAN, text));
            out.flush();
        } else if (force) {
            say(null, text);
        }
    }

    synchronized void endStatus() {
        clearStatus();
        status = "";
    }

    String paint(String colour, String text) {
        return ansi && colour != null ? "\033[" + colour + "m" + text + "\033[0m" : text;
    }

    private void clearStatus() {
        if (ansi && !status.isEmpty()) {
            out.print("\r\033[K");
        }
    }

    private void drawStatus() {
        if (ansi && !status.isEmpty()) {
            out.print(paint(CYAN, status));
        }
    }
}
