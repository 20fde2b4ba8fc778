package io.latchkey.cli;

import java.io.PrintStream;
import java.util.OptionalInt;
import sun.misc.Signal;

/**
 * Where the signals of {@link SignalTrap} go for {@code latchkey run} and {@code latchkey elect}: to the
 * {@link GuardedCommand} that runs, or, while none runs, to the main thread, which is interrupted out of
 * its wait and ends latchkey with 128+N without starting a command.
 *
 * <p>Guarantees: a command is started under the same guard the signal handler takes, so a signal either
 * comes before the start, and the command is not started, or after it, and reaches the command; none
 * falls between the two and is lost. The first signal that comes while no command runs decides the exit
 * status; every signal that comes while one runs is forwarded to it.
 *
 * <p>One instance per invocation, made on the main thread; the handler runs on the JVM's signal thread.
 * Thread-safe.
 */
final class SignalRelay {

    private final Object guard = new Object();
    private final Thread mainThread;
    private final PrintStream err;
    private final boolean killAfterGrace;
    private final String idle;
    private final String notRun;
    private Signal pending;         // guarded by guard: a signal that came while no command ran
    private Signal forwarded;       // guarded by guard: the first signal that came while a command ran
    private GuardedCommand running; // guarded by guard: the command, from its start until ended()

    private SignalRelay(PrintStream err, boolean killAfterGrace, String idle, String notRun) {
        this.mainThread = Thread.currentThread();
        this.err = err;
        this.killAfterGrace = killAfterGrace;
        this.idle = idle;
        this.notRun = notRun;
    }

    /**
     * Catches the signals of {@link SignalTrap} from now on, for the calling thread, which is the one a
     * signal interrupts while no command runs.
     *
     * @param killAfterGrace whether a forwarded signal is followed by SIGKILL after the grace
     *     ({@link GuardedCommand#forward})
     * @param idle what latchkey does while no command runs, for the message: {@code waiting for lock 'a'}
     * @param notRun what that signal meant for the command, for the same message: {@code the command was not run}
     */
    static SignalRelay install(PrintStream err, boolean killAfterGrace, String idle, String notRun) {
        SignalRelay relay = new SignalRelay(err, killAfterGrace, idle, notRun);
        SignalTrap.install(relay::onSignal);
        return relay;
    }

    /**
     * Starts {@code run} unless a signal came while no command ran; from then on, signals are forwarded
     * to it.
     *
     * @return empty once it runs; else the exit status latchkey ends with, after one line saying why:
     *     128+N for the signal that came first ({@link #stoppedWhileIdle()}), 127 or 126 for a command
     *     that cannot start ({@link GuardedCommand#start()})
     */
    OptionalInt start(GuardedCommand run) {
        synchronized (guard) {
            if (pending != null) {
                return OptionalInt.of(stoppedWhileIdle());
            }
            OptionalInt failed = run.start();
            if (failed.isEmpty()) {
                running = run;
            }
            return failed;
        }
    }

    /**
     * The command started last, which no longer runs, or null if none started since the last call;
     * signals from now on interrupt the main thread again. {@code latchkey run} never calls this: after
     * its one command, a signal still goes to it, where it is dropped once the command ended, and does
     * not interrupt the main thread while that releases the lease.
     */
    GuardedCommand ended() {
        synchronized (guard) {
            GuardedCommand ran = running;
            running = null;
            return ran;
        }
    }

    /**
     * The first signal forwarded to a command, or null; it cannot change while no command runs, so after
     * {@link #ended()} it says whether the command that ended was asked to stop.
     */
    Signal forwarded() {
        synchronized (guard) {
            return forwarded;
        }
    }

    /** The exit status if a signal came while no command ran, after saying so; otherwise null. */
    Integer stoppedWhileIdle() {
        Signal s;
        synchronized (guard) {
            s = pending;
        }
        if (s == null) {
            return null;
        }
        err.println("latchkey: SIG" + s.getName() + " while " + idle + "; " + notRun);
        return ExitCodes.SIGNAL_BASE + s.getNumber();
    }

    private void onSignal(Signal signal) {
        GuardedCommand run;
        synchronized (guard) {
            if (running == null) {
                if (pending == null) {
                    pending = signal;
                }
                mainThread.interrupt();
                return;
            }
            if (forwarded == null) {
                forwarded = signal;
            }
            run = running;
        }
        run.forward(signal, killAfterGrace);
    }
}
