package io.latchkey.kafka;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The polls of a backend's members once they hold: one thread for all of them, instead of a thread of each member.
 * A member's own thread polls it while it joins and waits, as fast as the group answers; once its grant is confirmed
 * it hands its consumer over here ({@link GroupMember#pollHeld}) and ends. So a client that holds many locks runs one
 * polling thread and, per held lock, the consumer's heartbeat thread alone, which the group protocol keeps per
 * member.
 *
 * <p>What a holder's poll does is small and never waits: a {@code poll} of no time (its partition is paused, so it
 * fetches nothing), which runs a rebalance's callbacks and joins a rebalance in steps, and the holder's evidence
 * from its heartbeats. Every member is polled once every {@value GroupMember#POLL_MILLIS} ms, as on its own thread;
 * a holder that joins a rebalance goes one step a poll, so its rejoin takes a few polls. The heartbeats that keep the
 * session are the heartbeat thread's, which a slow poll does not hold up; {@code max.poll.interval.ms} (at least
 * five minutes) is the bound on a poll. What could wait for the broker is done elsewhere: a release closes its
 * consumer on the releasing thread, any other end of a holder (a loss, a semaphore's acquire that keeps another
 * slot) on a thread of its own.
 *
 * <p>The thread runs while some member holds and ends when none does; the next grant starts it again.
 *
 * <p>Thread-safe: members join on their own threads and leave on this one; the thread is guarded by this object's
 * monitor.
 */
final class HeldPolls {

    private final Set<GroupMember> held = ConcurrentHashMap.newKeySet();
    private final String threadName;
    private Thread thread; // guarded by this

    HeldPolls(String threadName) {
        this.threadName = threadName;
    }

    /** Polls {@code member} from now on, until {@link GroupMember#pollHeld} says it is done. */
    void adopt(GroupMember member) {
        held.add(member);
        synchronized (this) {
            if (thread == null) {
                Thread t = new Thread(this::run, threadName);
                t.setDaemon(true);
                thread = t;
                t.start();
            }
        }
    }

    /** The name of the thread, while it runs; for tests. */
    String threadName() {
        return threadName;
    }

    private void run() {
        long period = TimeUnit.MILLISECONDS.toNanos(GroupMember.POLL_MILLIS);
        try {
            while (true) {
                long next = System.nanoTime() + period;
                for (GroupMember member : held) {
                    if (!member.pollHeld()) {
                        held.remove(member);
                    }
                }
                synchronized (this) {
                    if (held.isEmpty()) {
                        thread = null; // an adopt after this starts a new one
                        return;
                    }
                }
                for (long wait; (wait = next - System.nanoTime()) > 0; ) {
                    LockSupport.parkNanos(this, wait);
                }
            }
        } finally {
            synchronized (this) {
                if (thread == Thread.currentThread()) {
                    thread = null; // ended by an error (pollHeld catches the poll's own): the next grant starts another
                }
            }
        }
    }
}
