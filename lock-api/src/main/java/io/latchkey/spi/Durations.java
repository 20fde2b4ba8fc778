package io.latchkey.spi;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as users write them in URIs and read them in messages: {@code 500ms}, {@code 15s},
 * {@code 2m}, {@code 1h}. Backends parse their own duration options and print durations in messages
 * with this class, so that a message shows {@code 1500ms}, not {@code PT1.5S}. Thread-safe.
 */
public final class Durations {

    // Nine digits of hours still fit a Duration's nanoseconds many times over: parsing never overflows,
    // and LockOptions then bounds what an option may be.
    private static final Pattern FORM = Pattern.compile("(\\d{1,9})(ms|s|m|h)");

    private Durations() {
    }

    /**
     * Parses {@code text}.
     *
     * @param option the option's name, for the message
     * @throws IllegalArgumentException quoting the bad text
     */
    public static Duration parse(String option, String text) {
        return parsed(text, " for option '" + option + "'");
    }

    /**
     * Parses {@code text} given where the reader already knows what it is for, such as a command
     * line's option that the command line names itself.
     *
     * @throws IllegalArgumentException quoting the bad text, naming no option
     */
    public static Duration parse(String text) {
        return parsed(text, "");
    }

    private static Duration parsed(String text, String forWhat) {
        Matcher m = FORM.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("bad duration '" + text + "'" + forWhat
                    + ": write a whole number with a unit, such as 500ms, 15s, 2m or 1h");
        }
        long n = Long.parseLong(m.group(1));
        switch (m.group(2)) {
            case "ms":
                return Duration.ofMillis(n);
            case "s":
                return Duration.ofSeconds(n);
            case "m":
                return Duration.ofMinutes(n);
            default:
                return Duration.ofHours(n);
        }
    }

    /**
     * Formats {@code d} in the largest unit that shows it exactly: {@code 2h}, {@code 90s},
     * {@code 1500ms}; below a millisecond, in nanoseconds ({@code 250ns}).
     */
    public static String format(Duration d) {
        if (d.isNegative()) {
            return "-" + format(d.negated());
        }
        long nanos;
        try {
            nanos = d.toNanos();
        } catch (ArithmeticException e) {
            return d.toHours() + "h";
        }
        if (nanos % 1_000_000 != 0) {
            return nanos + "ns";
        }
        long ms = nanos / 1_000_000;
        if (ms == 0) {
            return "0s";
        }
        if (ms % 1000 != 0) {
            return ms + "ms";
        }
        long s = ms / 1000;
        if (s % 3600 == 0) {
            return s / 3600 + "h";
        }
        if (s % 60 == 0) {
            return s / 60 + "m";
        }
        return s + "s";
    }
}
