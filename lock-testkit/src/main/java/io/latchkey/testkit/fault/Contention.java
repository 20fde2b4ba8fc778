package io.latchkey.testkit.fault;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import java.io.PrintStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM's loop of acquires of one lock, for the randomized faults: acquire, hold for a random
 * time while asking {@link Lease#remaining()} at every check, release, again, until stopped.
 *
 * <p>Every step is one {@code event} line on this JVM's {@link System#nanoTime()}, printed the moment
 * it happens, so that a kill or a stop loses nothing said before it:
 * {@code event granted <token> <requestedAt> <returnedAt> <askedAt> <remainingNanos>} (the lease's first
 * claim is asked right after the acquire returned), {@code event check <token> <askedAt> <remainingNanos>},
 * {@code event lost <token> <at>} (from a callback on {@link Lease#lost()}, registered at the grant),
 * {@code event release <token> <at>} (the close begins), {@code event released <token> <at>}, and
 * {@code event failed <at> <message>} for an acquire that threw (the loop tries again, as an
 * application would). A holder that finds its lease invalid closes it and contends again.
 *
 * <p>Its own thread; {@link #stop()} interrupts it and waits until it closed what it held.
 */
final class Contention {

    /** The pace of retries after an acquire threw, so that a refused connection does not spin. */
    private static final long RETRY_PAUSE_MILLIS = 100;

    private final LockClient client;
    private final String name;
    private final Random random;
    private final long maxHoldMillis;
    private final long checkMillis;
    private final Duration wait;
    private final PrintStream out;
    private final Thread thread;
    private volatile boolean stopped;

    private Contention(LockClient client, String[] args, PrintStream out) {
        this.client = client;
        this.random = new Random(Long.parseLong(args[1]));
        this.maxHoldMillis = Long.parseLong(args[2]);
        this.checkMillis = Long.parseLong(args[3]);
        this.wait = Duration.ofMillis(Long.parseLong(args[4]));
        this.name = URLDecoder.decode(args[5], StandardCharsets.UTF_8);
        this.out = out;
        this.thread = new Thread(this::run, "testkit-child-contention");
        thread.setDaemon(true);
    }

    /** Starts the loop of {@code contend <seed> <maxHoldMillis> <checkMillis> <waitMillis> <name>}. */
    static Contention start(LockClient client, String[] command, PrintStream out) {
        Contention c = new Contention(client, command, out);
        c.thread.start();
        return c;
    }

    /** Stops the loop: interrupts a wait, and returns once what was held is closed. */
    void stop() throws InterruptedException {
        stopped = true;
        thread.interrupt();
        thread.join(TimeUnit.MINUTES.toMillis(1));
    }

    private void run() {
        while (!stopped) {
            long requestedAt = System.nanoTime();
            Optional<Lease> got;
            try {
                got = client.lock(name).tryLock(wait);
            } catch (InterruptedException e) {
                return;
            } catch (LockException e) {
                event("failed " + System.nanoTime() + " " + oneLine(e));
                if (!pause(RETRY_PAUSE_MILLIS)) {
                    return;
                }
                continue;
            }
            if (got.isEmpty()) {
                continue;
            }
            hold(got.get(), requestedAt);
        }
    }

    private void hold(Lease lease, long requestedAt) {
        long returnedAt = System.nanoTime();
        long token = lease.fencingToken();
        long askedAt = System.nanoTime();
        long remaining = lease.remaining().toNanos();
        event("granted " + token + " " + requestedAt + " " + returnedAt + " " + askedAt + " " + remaining);
        lease.lost().thenRun(() -> event("lost " + token + " " + System.nanoTime()));
        long holdUntil = returnedAt + TimeUnit.MILLISECONDS.toNanos((long) (random.nextDouble() * maxHoldMillis));
        try {
            while (!stopped && remaining > 0 && System.nanoTime() - holdUntil < 0) {
                if (!pause(Math.min(checkMillis, Math.max(1, TimeUnit.NANOSECONDS.toMillis(holdUntil - System.nanoTime()))))) {
                    break;
                }
                askedAt = System.nanoTime();
                remaining = lease.remaining().toNanos();
                event("check " + token + " " + askedAt + " " + remaining);
            }
        } finally {
            event("release " + token + " " + System.nanoTime());
            try {
                lease.close();
            } catch (LockException e) {
                // the release did not reach the backend: the lock expires there on its own
            }
            event("released " + token + " " + System.nanoTime());
        }
    }

    /** Sleeps; false if stopped meanwhile. */
    private boolean pause(long millis) {
        try {
            Thread.sleep(millis);
            return !stopped;
        } catch (InterruptedException e) {
            return false;
        }
    }

    private void event(String what) {
        out.println(ChildHolderMain.PREFIX + "event " + what);
    }

    private static String oneLine(Throwable e) {
        return (e.getClass().getSimpleName() + ": " + e.getMessage()).replace('\n', ' ');
    }
}
