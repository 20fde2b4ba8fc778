package io.latchkey.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Reads durations on the command line the way lock URIs write them ({@code 500ms}, {@code 15s},
 * {@code 2m}, {@code 1h}), so that {@code --wait 15s} and {@code ?lease=15s} read alike.
 *
 * <p>The grammar is repeated here rather than borrowed from {@code io.latchkey.internal}: the command
 * line uses the public API only. Stateless and thread-safe.
 */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration> {

    private static final Pattern FORM = Pattern.compile("(\\d{1,12})(ms|s|m|h)");

    @Override
    public Duration convert(String text) {
        return parse(text);
    }

    /**
     * Parses {@code text}.
     *
     * @throws CommandLine.TypeConversionException quoting the bad text, which picocli reports as a usage error
     */
    public static Duration parse(String text) {
        Matcher m = FORM.matcher(text.trim());
        if (!m.matches()) {
            throw new CommandLine.TypeConversionException("bad duration '" + text
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

    /** Writes {@code d} back in the same grammar, with the largest unit that is exact. */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 3_600_000 == 0 && ms != 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0 && ms != 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }
}
