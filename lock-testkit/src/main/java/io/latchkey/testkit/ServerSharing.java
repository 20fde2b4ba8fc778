package io.latchkey.testkit;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which tests use each contract server at this moment, so that a test of a {@link GroupExecution.Alone}
 * group, which pauses or restarts the server or counts the JVM's threads, fails at once, naming the
 * other test, if it ever runs beside another test of the same server; and so does a test that starts
 * while such a test runs. {@link GroupExecution}'s resource locks are what keeps them apart; this
 * shows that they did, instead of leaving a resumed server or a foreign thread to fail some other
 * assertion in a way that points nowhere. Thread-safe.
 */
final class ServerSharing {

    private final Map<Object, List<Running>> byServer = new IdentityHashMap<>();

    private record Running(KitGroup group, String test, boolean alone) {
        @Override
        public String toString() {
            return group.getClass().getSimpleName() + "#" + test + (alone ? " (alone)" : "");
        }
    }

    /** Records that {@code test} of {@code group} starts on {@code server}; fails if that breaks a group's "alone". */
    synchronized void enter(Object server, KitGroup group, String test) {
        boolean alone = group.getClass().isAnnotationPresent(GroupExecution.Alone.class);
        List<Running> running = byServer.computeIfAbsent(server, s -> new ArrayList<>());
        List<Running> conflicting = running.stream().filter(r -> alone || r.alone()).toList();
        if (!conflicting.isEmpty()) {
            throw new IllegalStateException(new Running(group, test, alone) + " started while " + conflicting
                    + " ran on the same server: a group that faults the server or counts the JVM's threads must"
                    + " run alone; check the group's GroupExecution annotation and JUnit's parallel configuration");
        }
        running.add(new Running(group, test, alone));
    }

    /** Records that the test of {@code group} on {@code server} ended. */
    synchronized void leave(Object server, KitGroup group) {
        List<Running> running = byServer.get(server);
        if (running != null) {
            running.removeIf(r -> r.group() == group);
            if (running.isEmpty()) {
                byServer.remove(server);
            }
        }
    }
}
