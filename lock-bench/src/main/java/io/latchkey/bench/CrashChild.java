package io.latchkey.bench;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The holder of the crash scenario, in a JVM of its own: connects one variant, takes the lock, prints
 * {@value #ACQUIRED} and waits to be killed with SIGKILL.
 *
 * <p>Arguments: backend, variant label, URI, lease in ms, timeout in ms, lock name.
 */
public final class CrashChild {

    static final String ACQUIRED = "@bench acquired";

    private CrashChild() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err); // libraries may print; the protocol line is ours alone
        Backend backend = Backend.of(args[0]);
        Target target = new Target(args[2], Duration.ofMillis(Long.parseLong(args[3])),
                Duration.ofMillis(Long.parseLong(args[4])));
        Locker locker = backend.variant(args[1]).opener().open(target);
        Locker.Held held = locker.acquire(args[5], Duration.ofMinutes(2));
        out.println(held == null ? "@bench empty" : ACQUIRED);
        Thread.sleep(Long.MAX_VALUE);
    }
}
