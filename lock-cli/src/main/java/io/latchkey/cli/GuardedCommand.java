package io.latchkey.cli;

import io.latchkey.Leadership;
import io.latchkey.Lease;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import sun.misc.Signal;

/**
 * One start of the command under one grant (a lease of {@code latchkey run}, a term of
 * {@code latchkey elect}): starts it with its environment, stops it when the grant ends, forwards
 * signals to it, and keeps a {@link Watchdog} that stops it if latchkey itself is killed.
 *
 * <p>Guarantees: when the grant is lost (its {@code lost()} completes, or its validity deadline passes
 * on this process's clock), the command and every process it started get SIGTERM at once and, if still
 * alive after the kill grace, SIGKILL. A signal is forwarded to the command alone, as a terminal's
 * Ctrl-C reaches the whole process group anyway; {@link #forward(Signal, boolean) with a kill} the
 * tree also gets SIGKILL after the grace. The watchdog starts before the command and learns the
 * command's pid from the command's own wrapper, so that no kill -9 of this JVM can fall between the
 * command's start and its guard's.
 *
 * <p>Used once: {@link #start()}, then {@link #await(Grant)} on one thread; {@link #forward} and the
 * loss run on others. Thread-safe.
 */
final class GuardedCommand {

    /**
     * What the command runs under, seen the same way whether it is a lease or a term.
     *
     * @param valid whether it is still valid now
     * @param remaining how long it stays valid without a further confirmation
     * @param lost completes when the backend, or the library's own clock, says it is lost
     */
    record Grant(BooleanSupplier valid, Supplier<Duration> remaining, CompletionStage<? extends Exception> lost) {

        static Grant of(Lease lease) {
            return new Grant(lease::isValid, lease::remaining, lease.lost());
        }

        static Grant of(Leadership term) {
            return new Grant(term::isValid, term::remaining, term.lost());
        }
    }

    private final List<String> command;
    private final Map<String, String> env;
    private final Duration killGrace;
    private final String subject;
    private final String onStartFailure;
    private final PrintStream err;

    private final Object guard = new Object();
    private Process child;                 // guarded by guard
    private boolean lost;                  // guarded by guard
    private Set<ProcessHandle> stopTree;   // guarded by guard, set with killTask
    private ScheduledFuture<?> killTask;   // guarded by guard: the SIGKILL after the grace, once a stop began
    private Watchdog watchdog;

    /**
     * @param subject what messages speak of: {@code lock 'a'}, {@code term 4 of election 'a'}
     * @param onStartFailure what happens when the command cannot start, for its message: {@code the lock is released}
     */
    GuardedCommand(List<String> command, Map<String, String> env, Duration killGrace, String subject,
            String onStartFailure, PrintStream err) {
        this.command = List.copyOf(command);
        this.env = Map.copyOf(env);
        this.killGrace = killGrace;
        this.subject = subject;
        this.onStartFailure = onStartFailure;
        this.err = err;
    }

    /**
     * Starts the watchdog, then the command behind its wrapper, inheriting stdin, stdout and stderr.
     *
     * @return empty once it runs; else the exit status for a command not found (127) or not executable
     *     (126), after one line saying so
     */
    OptionalInt start() {
        OptionalInt unrunnable = ProgramLookup.problem(command.get(0),
                env.getOrDefault("PATH", System.getenv("PATH")));
        if (unrunnable.isPresent()) {
            return cannotRun(unrunnable.getAsInt());
        }
        watchdog = Watchdog.start(killGrace, command.get(0), err);
        ProcessBuilder pb = new ProcessBuilder(watchdog == null ? command : watchdog.wrap(command)).inheritIO();
        pb.environment().putAll(env);
        Process started;
        try {
            started = pb.start();
        } catch (IOException e) {
            stopWatchdog();
            return cannotRun(String.valueOf(e.getMessage()).contains("error=13")
                    ? ExitCodes.NOT_EXECUTABLE : ExitCodes.NOT_FOUND);
        }
        synchronized (guard) {
            child = started;
        }
        return OptionalInt.empty();
    }

    private OptionalInt cannotRun(int status) {
        err.println("latchkey: cannot run '" + command.get(0) + "' under " + subject + ": "
                + (status == ExitCodes.NOT_EXECUTABLE ? "permission denied" : "command not found") + "; "
                + onStartFailure);
        return OptionalInt.of(status);
    }

    /**
     * Waits until the started command ends, stopping it if {@code grant} is lost meanwhile; after a stop,
     * until its whole tree ended or got SIGKILL.
     *
     * @return the command's exit status (128+N if it died of signal N), or {@link ExitCodes#LOCK_LOST}
     *     if the grant was lost and the command stopped
     */
    int await(Grant grant) {
        Process started;
        synchronized (guard) {
            started = child;
        }
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "latchkey-run-watch");
            t.setDaemon(true);
            return t;
        });
        try {
            grant.lost().thenAccept(e -> timer.execute(() -> stop(e.getMessage())));
            // A second witness beside lost(): a timer armed on the validity deadline itself, re-armed on the
            // later deadline each renewal gives, so the command is stopped when the deadline passes even if
            // the library's own signal comes late; a poll would add up to its period to every stop.
            armOnDeadline(timer, grant);
            int status = waitUninterruptibly(started);
            Set<ProcessHandle> tree;
            ScheduledFuture<?> kill;
            boolean wasLost;
            synchronized (guard) {
                tree = stopTree;
                kill = killTask;
                wasLost = lost;
            }
            if (kill != null) {
                awaitTree(tree, kill);
            }
            return wasLost ? ExitCodes.LOCK_LOST : status;
        } finally {
            timer.shutdownNow();
            stopWatchdog(); // the command is over: nothing left to guard, and its pid may be reused
        }
    }

    /**
     * Whether the command was stopped because its grant was lost, once {@link #await} returned: a command
     * may exit with {@link ExitCodes#LOCK_LOST} of its own.
     */
    boolean stoppedOnLoss() {
        synchronized (guard) {
            return lost;
        }
    }

    /**
     * Forwards {@code signal} to the command, if it runs; with {@code killAfterGrace}, its tree also gets
     * SIGKILL after the grace unless it ended by then.
     */
    void forward(Signal signal, boolean killAfterGrace) {
        Process target;
        synchronized (guard) {
            target = child;
            if (target == null || !target.isAlive()) {
                return;
            }
            if (killAfterGrace) {
                scheduleKill("ran on for " + DurationConverter.format(killGrace) + " after SIG" + signal.getName());
            }
        }
        ProcessTree.send(signal.getName(), target.pid());
    }

    private void armOnDeadline(ScheduledExecutorService timer, Grant grant) {
        Duration left = grant.remaining().get();
        if (!grant.valid().getAsBoolean() || left.isZero() || left.isNegative()) {
            stop(subject + " is no longer valid: its validity deadline passed");
            return;
        }
        try {
            timer.schedule(() -> armOnDeadline(timer, grant), left.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // the command ended and the timer was shut down: nothing left to guard
        }
    }

    /**
     * Stops the command after a loss. The SIGKILL is scheduled, under the guard, before the SIGTERM goes
     * out: the command may end at once, and the thread in {@link #await} that then reads
     * {@link #killTask} must find it.
     */
    private void stop(String reason) {
        Set<ProcessHandle> tree;
        synchronized (guard) {
            if (lost || !child.isAlive()) {
                return;
            }
            lost = true;
            tree = scheduleKill("ignored SIGTERM for " + DurationConverter.format(killGrace) + " after " + subject
                    + " was lost");
        }
        err.println("latchkey: " + reason + "; sending SIGTERM to the command (pids " + ProcessTree.pids(tree)
                + "), SIGKILL after " + DurationConverter.format(killGrace));
        ProcessTree.terminate(tree);
    }

    /**
     * Under the guard: the tree as it is now, with its SIGKILL after the grace scheduled once; {@code why}
     * completes "the command ..." in the message that a SIGKILL went out.
     */
    private Set<ProcessHandle> scheduleKill(String why) {
        Set<ProcessHandle> tree = ProcessTree.snapshot(child.toHandle());
        if (killTask == null) {
            stopTree = tree;
            killTask = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "latchkey-run-kill");
                t.setDaemon(true);
                return t;
            }).schedule(() -> killAfterGrace(tree, why), killGrace.toMillis(), TimeUnit.MILLISECONDS);
        }
        return tree;
    }

    private void killAfterGrace(Set<ProcessHandle> signalled, String why) {
        Set<ProcessHandle> tree = new LinkedHashSet<>(signalled);
        tree.addAll(ProcessTree.snapshot(child.toHandle()));
        List<Long> killed = ProcessTree.kill(tree);
        if (!killed.isEmpty()) {
            err.println("latchkey: the command " + why + "; sent SIGKILL to pids " + killed);
        }
    }

    /** After a stop: returns once every process of the tree ended, or the SIGKILL went out. */
    private void awaitTree(Set<ProcessHandle> tree, ScheduledFuture<?> kill) {
        long deadline = System.nanoTime() + killGrace.toNanos();
        for (ProcessHandle p : tree) {
            long left = deadline - System.nanoTime();
            try {
                p.onExit().get(Math.max(0, left), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                break;
            } catch (ExecutionException e) {
                // onExit never fails; a process we cannot watch is the kill task's business
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (tree.stream().anyMatch(ProcessHandle::isAlive)) {
            try {
                kill.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException e) {
                err.println("latchkey: could not kill the command under " + subject + ": " + e.getCause());
            }
        } else {
            kill.cancel(false);
        }
    }

    private void stopWatchdog() {
        if (watchdog != null) {
            watchdog.close();
        }
    }

    private static int waitUninterruptibly(Process p) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return p.waitFor();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
