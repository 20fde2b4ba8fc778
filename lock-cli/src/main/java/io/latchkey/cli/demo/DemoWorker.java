package io.latchkey.cli.demo;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.cli.Main;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One worker of {@code latchkey demo}, in its own process: the midnight cron of one node. It races for
 * the lock, and while it holds it writes the nightly report to the demo's {@link FencedStore} with its
 * fencing token, checking its lease before every write.
 *
 * <p>It reports every step to the demo on stdout, one line each, stamped with {@link System#nanoTime()}:
 * on Linux and macOS that clock is the machine's monotonic clock, shared by every process, so the demo
 * can put the workers' events on one time line. One thing it does that a careful job would not: when it
 * finds on waking that it slept through its lease, it sends the write it was about to make anyway, as
 * a process paused between its check and its write would, to show the store refuse it.
 *
 * <p>Arguments: {@code URI LOCK STORE_PORT NAME}. Runs until killed.
 */
public final class DemoWorker {

    private static final Duration WAIT = Duration.ofSeconds(2);
    private static final long WRITE_EVERY_MS = 250;

    private final PrintStream out = System.out;
    private final String name;

    private DemoWorker(String name) {
        this.name = name;
    }

    /** Runs a worker; see the class comment for the arguments. */
    public static void main(String[] args) throws Exception {
        Main.configureLogging(false);
        if (args.length != 4) {
            System.err.println("usage: DemoWorker URI LOCK STORE_PORT NAME");
            System.exit(2);
        }
        new DemoWorker(args[3]).run(args[0], args[1], Integer.parseInt(args[2]));
    }

    private void run(String uri, String lockName, int storePort) throws Exception {
        try (LockClient client = connect(uri);
             Socket store = new Socket(InetAddress.getLoopbackAddress(), storePort);
             PrintWriter toStore = new PrintWriter(store.getOutputStream(), true, StandardCharsets.UTF_8);
             BufferedReader fromStore = new BufferedReader(new InputStreamReader(store.getInputStream(), StandardCharsets.UTF_8))) {
            DistributedLock lock = client.lock(lockName);
            report("READY", 0, ProcessHandle.current().pid());
            while (true) {
                Optional<Lease> maybe;
                try {
                    maybe = lock.tryLock(WAIT);
                } catch (LockException e) {
                    report("UNAVAILABLE", 0, 0);
                    Thread.sleep(200); // the backend is away; try again soon, as a cron retrying would
                    continue;
                }
                if (maybe.isPresent()) {
                    hold(maybe.get(), toStore, fromStore);
                    // the next night comes sooner in the demo: a short rest lets the others win a round
                    Thread.sleep(300 + ThreadLocalRandom.current().nextInt(900));
                }
            }
        }
    }

    private LockClient connect(String uri) throws InterruptedException {
        while (true) {
            try {
                return LockClient.connect(uri);
            } catch (LockException e) {
                report("UNAVAILABLE", 0, 0);
                Thread.sleep(200);
            }
        }
    }

    private void hold(Lease lease, PrintWriter toStore, BufferedReader fromStore) throws IOException, InterruptedException {
        long token = lease.fencingToken();
        long granted = System.nanoTime();
        long atGrant = lease.remaining().toNanos();
        report("GRANT", token, System.nanoTime() + atGrant);
        // the moment the library signals the loss ends the lease for the demo's checker, not this
        // worker's next look, which may come a write interval later
        lease.lost().thenAccept(e -> report("LOSS", token, e.reason().ordinal()));
        // longer than the lease: the holder lives on renewals, as a real nightly job would
        long end = granted + Duration.ofMillis(3500 + ThreadLocalRandom.current().nextInt(1000)).toNanos();
        long lastLook = granted;
        while (true) {
            long now = System.nanoTime();
            long left = lease.remaining().toNanos();
            // the deadline claimed, counted from after remaining() returned: the checker's interval
            // is then never shorter than the claim
            long claimed = System.nanoTime() + left;
            long gap = now - lastLook;
            lastLook = now;
            if (left <= 0 || !lease.isValid()) {
                // a gap of many write intervals means this process was not running: paused, not cut off
                if (gap > 4 * Duration.ofMillis(WRITE_EVERY_MS).toNanos()) {
                    report("STALE", token, gap);
                    write(token, toStore, fromStore);
                } else {
                    report("LOST", token, 0);
                }
                break;
            }
            if (now - end >= 0) {
                break;
            }
            report("VALID", token, claimed);
            write(token, toStore, fromStore);
            Thread.sleep(WRITE_EVERY_MS);
        }
        // reported before the release: from here on this worker no longer uses the lease
        report(lease.isValid() ? "RELEASE" : "CLOSED", token, System.nanoTime());
        try {
            lease.close();
        } catch (LockException e) {
            // the release did not reach the backend: the lock expires on its own; the demo carries on
        }
    }

    private void write(long token, PrintWriter toStore, BufferedReader fromStore) throws IOException {
        toStore.println("WRITE " + name + " " + token);
        String answer = fromStore.readLine();
        report(answer != null && answer.startsWith("OK") ? "WRITE_OK" : "WRITE_REFUSED", token,
                answer == null ? 0 : Long.parseLong(answer.substring(answer.indexOf(' ') + 1)));
    }

    private void report(String kind, long token, long value) {
        synchronized (out) {
            out.println("EV " + name + " " + kind + " " + System.nanoTime() + " " + token + " " + value);
            out.flush();
        }
    }
}
