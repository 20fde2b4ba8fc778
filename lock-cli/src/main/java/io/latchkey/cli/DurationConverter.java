package io.latchkey.cli;

import io.latchkey.spi.Durations;
import java.time.Duration;
import picocli.CommandLine;

/**
 * Reads durations on the command line the way lock URIs write them ({@code 500ms}, {@code 15s},
 * {@code 2m}, {@code 1h}), so that {@code --wait 15s} and {@code ?lease=15s} read alike: both go
 * through {@link Durations}. Stateless and thread-safe.
 */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration> {

    @Override
    public Duration convert(String text) {
        return parse(text);
    }

    /**
     * Parses {@code text}.
     *
     * @throws CommandLine.TypeConversionException with {@link Durations}' message, which picocli reports as a
     *     usage error after the option's name
     */
    public static Duration parse(String text) {
        try {
            return Durations.parse(text);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
        }
    }

    /** Writes {@code d} back in the same grammar, with the largest unit that is exact. */
    public static String format(Duration d) {
        return Durations.format(d);
    }
}
