package io.latchkey.cli;

import java.util.List;
import java.util.function.Consumer;
import sun.misc.Signal;

/**
 * Catches SIGTERM, SIGINT and SIGHUP for {@code latchkey run} and {@code latchkey elect}, in place of
 * the JVM's default of running shutdown hooks and exiting: while waiting, a signal must end the wait at
 * once; while the command runs, it must reach the command, and the lock stay held until the command
 * ends.
 *
 * <p>{@code sun.misc.Signal} (module {@code jdk.unsupported}) is the only way a Java program has to
 * catch these; it is supported on every JDK this project builds with. Handlers run on a thread of the
 * JVM's own, one signal at a time.
 */
final class SignalTrap {

    /** The signals caught, by the names {@code kill -s} takes. */
    static final List<String> SIGNALS = List.of("TERM", "INT", "HUP");

    private SignalTrap() {
    }

    /** Routes every signal of {@link #SIGNALS} to {@code handler}, with its name and number. */
    static void install(Consumer<Signal> handler) {
        for (String name : SIGNALS) {
            Signal.handle(new Signal(name), handler::accept);
        }
    }
}
