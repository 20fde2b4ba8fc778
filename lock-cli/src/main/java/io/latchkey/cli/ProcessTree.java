package io.latchkey.cli;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Signals to a command and the processes it started.
 *
 * <p>A tree is taken as a snapshot before the first signal: once a parent dies its children are
 * adopted by init and no longer show as its descendants, so a SIGKILL sent later to "the tree" would
 * miss exactly the processes that survived the SIGTERM. Stateless and thread-safe.
 */
final class ProcessTree {

    private ProcessTree() {
    }

    /** {@code root} and every live descendant, parents first. */
    static Set<ProcessHandle> snapshot(ProcessHandle root) {
        Set<ProcessHandle> all = new LinkedHashSet<>();
        all.add(root);
        root.descendants().forEach(all::add);
        return all;
    }

    /** SIGTERM to each process of {@code tree} still alive; returns how many got it. */
    static int terminate(Set<ProcessHandle> tree) {
        int n = 0;
        for (ProcessHandle p : tree) {
            if (p.isAlive() && p.destroy()) { // destroy() is SIGTERM on POSIX
                n++;
            }
        }
        return n;
    }

    /** SIGKILL to each process of {@code tree} still alive; returns their pids. */
    static List<Long> kill(Set<ProcessHandle> tree) {
        List<Long> killed = new ArrayList<>();
        for (ProcessHandle p : tree) {
            if (p.isAlive() && p.destroyForcibly()) {
                killed.add(p.pid());
            }
        }
        return killed;
    }

    /** Sends {@code SIG<name>} to {@code pid} with the {@code kill} command: Java has no call for INT or HUP. */
    static void send(String name, long pid) {
        try {
            Process kill = new ProcessBuilder("kill", "-s", name, Long.toString(pid))
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            kill.waitFor(5, TimeUnit.SECONDS);
        } catch (IOException e) {
            System.err.println("latchkey: cannot forward SIG" + name + " to process " + pid + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The pids of {@code tree}, for a message. */
    static String pids(Set<ProcessHandle> tree) {
        return tree.stream().map(p -> Long.toString(p.pid())).collect(Collectors.joining(" "));
    }
}
