package io.latchkey.internal;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as written in URIs: {@code 500ms}, {@code 15s}, {@code 2m}, {@code 1h}. */
public final class Durations {

    private static final Pattern FORM = Pattern.compile("(\\d{1,12})(ms|s|m|h)");

    private Durations() {
    }

    /**
     * Parses {@code text}.
     *
     * @param option the option's name, for the message
     * @throws IllegalArgumentException quoting the bad text
     */
    public static Duration parse(String option, String text) {
        Matcher m = FORM.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("bad duration '" + text + "' for option '" + option
                    + "': write a whole number with a unit, such as 500ms, 15s, 2m or 1h");
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
}
