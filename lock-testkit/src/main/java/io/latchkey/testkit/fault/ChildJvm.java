package io.latchkey.testkit.fault;

import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * How the kit, the backends' tests and the benchmarks start a short-lived child JVM (a holder to kill,
 * a server to pause, a {@code latchkey} process): this JVM's own {@code java}, with the options of the
 * {@code latchkey} script. Stateless.
 */
public final class ChildJvm {

    /**
     * The client compiler only and the serial collector: a JVM that lives seconds starts sooner and takes
     * less of a loaded two-core machine's CPU than one that compiles for peak speed and runs a parallel
     * collector. The {@code latchkey} script starts the command line with the same two.
     */
    public static final List<String> QUICK_START = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

    private ChildJvm() {
    }

    /** This JVM's {@code java} executable followed by {@link #QUICK_START}, to which a caller adds the rest. */
    public static List<String> command() {
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(QUICK_START);
        return command;
    }
}
