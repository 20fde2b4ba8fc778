package io.latchkey.bench;

import static io.latchkey.bench.BenchThreads.join;
import static io.latchkey.bench.BenchThreads.thread;

import io.latchkey.testkit.fault.ChildJvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * The scenarios, each run for one variant in one round; each returns its measures by name, in
 * milliseconds unless the name says otherwise.
 *
 * <p>Every wait is bounded: a variant that does not hand the lock over fails the run instead of
 * hanging it.
 */
final class Scenarios {

    /** The scenarios in the order a round runs them. */
    static final List<String> ALL = List.of("uncontended", "contended", "handover", "crash", "connect", "names", "readwrite", "held");

    static final String P50 = "lock+unlock p50 (ms)";
    static final String P99 = "lock+unlock p99 (ms)";
    static final String P999 = "lock+unlock p99.9 (ms)";
    static final String THROUGHPUT = "contended acquisitions/s (2 clients × 4 threads)";
    static final String CONTENDED_P99 = "contended lock+unlock p99 (ms)";
    static final String HANDOVER_1 = "hand-over, 1 waiter, p50 (ms)";
    static final String HANDOVER_20 = "hand-over, 20 waiters, p50 (ms)";
    static final String CRASH = "crash failover after kill -9 (ms)";
    static final String CONNECT = "connect + first lock (ms)";
    static final String NAMES_TIME = "distinct names: lock+unlock each, total (ms)";
    static final String NAMES_HEAP = "distinct names: heap after GC per name (bytes)";
    static final String NAMES_LEFT = "distinct names: objects left on the server per name";
    static final String RW_READ = "read-write: uncontended read lock+unlock p50 (ms)";
    static final String RW_WRITE = "read-write: uncontended write lock+unlock p50 (ms)";
    static final String RW_READS = "read-write: 8 readers + 1 writer, reads/s";
    static final String RW_WRITES = "read-write: 8 readers + 1 writer, writes/s";

    private static final Duration LONG_WAIT = Duration.ofSeconds(60);
    private static final int UNCONTENDED_MAX_OPS = 5_000;

    private final Backend backend;
    private final Target target;
    private final Duration seconds;
    private final Duration hold;
    private final int names;
    private final int held;
    private final String runId = Long.toString(System.currentTimeMillis() % 1_000_000, 36);

    Scenarios(Backend backend, Target target, Duration seconds, Duration hold, int names, int held) {
        this.backend = backend;
        this.target = target;
        this.seconds = seconds;
        this.hold = hold;
        this.names = names;
        this.held = backend == Backend.KAFKA ? Math.min(held, HeldLocks.KAFKA_CAP) : held;
    }

    /** How many locks the held scenario takes on this backend: {@code --held}, at most 1,000 on Kafka. */
    int heldCount() {
        return held;
    }

    /**
     * The scenarios that a run first warms up, each variant once, results dropped: the latency scenarios,
     * whose first round otherwise timed the variant that ran first in a JVM whose JIT had not compiled its
     * code yet.
     */
    static final List<String> WARMED = List.of("uncontended", "contended", "handover", "readwrite");

    Map<String, Double> run(String scenario, Backend.Variant v, int round) throws Exception {
        String name = runId + "-" + scenario + "-" + round + "-" + v.label().replaceAll("[^A-Za-z0-9]", "");
        switch (scenario) {
            case "uncontended":
                return uncontended(v, name);
            case "contended":
                return contended(v, name);
            case "handover":
                Map<String, Double> m = new LinkedHashMap<>();
                m.put(HANDOVER_1, handover(v, name + "-1", 1));
                m.put(HANDOVER_20, handover(v, name + "-20", 20));
                return m;
            case "crash":
                return Map.of(CRASH, crash(v, name));
            case "connect":
                return Map.of(CONNECT, connect(v, name));
            case "names":
                return names(v, name);
            case "readwrite":
                return readWrite(v, name);
            case "held":
                return v == Backend.LATCHKEY ? HeldLocks.measure(backend, target, held, name) : Map.of();
            default:
                throw new IllegalArgumentException("unknown scenario '" + scenario + "': use " + String.join(", ", ALL));
        }
    }

    /** One thread, one client, one name: lock+unlock back to back for the run's duration (at most 5,000). */
    private Map<String, Double> uncontended(Backend.Variant v, String name) throws Exception {
        try (Locker l = v.opener().open(target)) {
            long warmUntil = System.nanoTime() + seconds.toNanos() / 3;
            for (int i = 0; i < 200 && System.nanoTime() - warmUntil < 0; i++) {
                lockUnlock(l, name);
            }
            Histogram h = new Histogram(3);
            long end = System.nanoTime() + seconds.toNanos();
            for (int i = 0; i < UNCONTENDED_MAX_OPS && (i < 3 || System.nanoTime() - end < 0); i++) {
                long t0 = System.nanoTime();
                lockUnlock(l, name);
                h.recordValue(System.nanoTime() - t0);
            }
            Map<String, Double> m = new LinkedHashMap<>();
            m.put(P50, ms(h.getValueAtPercentile(50)));
            m.put(P99, ms(h.getValueAtPercentile(99)));
            m.put(P999, ms(h.getValueAtPercentile(99.9)));
            return m;
        }
    }

    /**
     * A read-write lock: uncontended read and write lock+unlock (one thread, one client), then two clients
     * with four reading threads each and one writing thread on the first, no work under the lock. A
     * variant without read-write locks (a raw client with no such recipe, Latchkey on Kafka) measures nothing.
     */
    private Map<String, Double> readWrite(Backend.Variant v, String name) throws Exception {
        Map<String, Double> m = new LinkedHashMap<>();
        try (Locker l = v.opener().open(target)) {
            try {
                m.put(RW_READ, modeP50(l, name + "-r", false));
            } catch (UnsupportedOperationException e) {
                return Map.of();
            }
            m.put(RW_WRITE, modeP50(l, name + "-w", true));
        }
        List<Locker> clients = open(v, 2);
        try {
            AtomicLong reads = new AtomicLong();
            AtomicLong writes = new AtomicLong();
            CountDownLatch start = new CountDownLatch(1);
            long[] end = new long[1];
            List<Thread> threads = new ArrayList<>();
            List<Throwable> failures = new ArrayList<>();
            for (int t = 0; t < 9; t++) {
                boolean write = t == 8;
                Locker l = clients.get(write ? 0 : t % 2);
                threads.add(thread("readwrite", () -> {
                    start.await();
                    while (System.nanoTime() - end[0] < 0) {
                        Locker.Held h = l.acquireMode(name + "-mixed", write, LONG_WAIT);
                        if (h == null) {
                            throw new IllegalStateException(v.label() + ": not acquired within " + LONG_WAIT);
                        }
                        h.release();
                        if (System.nanoTime() - end[0] < 0) {
                            (write ? writes : reads).incrementAndGet();
                        }
                    }
                }, failures));
            }
            end[0] = System.nanoTime() + seconds.toNanos();
            start.countDown();
            join(threads, seconds.plus(LONG_WAIT), failures);
            m.put(RW_READS, reads.get() / (seconds.toNanos() / 1e9));
            m.put(RW_WRITES, writes.get() / (seconds.toNanos() / 1e9));
            return m;
        } finally {
            closeAll(clients);
        }
    }

    /** The median of one mode's lock+unlock on one thread, after a warm-up, for the run's duration (at most 2,000). */
    private double modeP50(Locker l, String name, boolean write) throws Exception {
        for (int i = 0; i < 50; i++) {
            l.acquireMode(name, write, LONG_WAIT).release();
        }
        Histogram h = new Histogram(3);
        long end = System.nanoTime() + seconds.toNanos();
        for (int i = 0; i < 2_000 && (i < 3 || System.nanoTime() - end < 0); i++) {
            long t0 = System.nanoTime();
            l.acquireMode(name, write, LONG_WAIT).release();
            h.recordValue(System.nanoTime() - t0);
        }
        return ms(h.getValueAtPercentile(50));
    }

    /** Two clients, four threads each, one name, no work under the lock. */
    private Map<String, Double> contended(Backend.Variant v, String name) throws Exception {
        List<Locker> clients = open(v, 2);
        try {
            Recorder rec = new Recorder(3);
            AtomicLong count = new AtomicLong();
            CountDownLatch start = new CountDownLatch(1);
            long[] end = new long[1];
            List<Thread> threads = new ArrayList<>();
            List<Throwable> failures = new ArrayList<>();
            for (int c = 0; c < 2; c++) {
                Locker l = clients.get(c);
                for (int i = 0; i < 4; i++) {
                    threads.add(thread("contended", () -> {
                        start.await();
                        while (System.nanoTime() - end[0] < 0) {
                            long t0 = System.nanoTime();
                            Locker.Held h = l.acquire(name, LONG_WAIT);
                            if (h == null) {
                                throw new IllegalStateException(v.label() + ": not acquired within " + LONG_WAIT);
                            }
                            h.release();
                            long t1 = System.nanoTime();
                            if (t1 - end[0] < 0) {
                                rec.recordValue(t1 - t0);
                                count.incrementAndGet();
                            }
                        }
                    }, failures));
                }
            }
            end[0] = System.nanoTime() + seconds.toNanos();
            start.countDown();
            join(threads, seconds.plus(LONG_WAIT), failures);
            Map<String, Double> m = new LinkedHashMap<>();
            m.put(THROUGHPUT, count.get() / (seconds.toNanos() / 1e9));
            m.put(CONTENDED_P99, ms(rec.getIntervalHistogram().getValueAtPercentile(99)));
            return m;
        } finally {
            closeAll(clients);
        }
    }

    /**
     * {@code waiters + 1} clients, one thread each, take turns: a holder keeps the lock for the hold
     * time, so that the others are waiting on the server, then releases it; the time from the start of
     * its release to another client's grant is one hand-over. The releaser waits again only once another
     * client holds the lock. Returns the median hand-over.
     */
    private double handover(Backend.Variant v, String name, int waiters) throws Exception {
        List<Locker> clients = open(v, waiters + 1);
        try {
            Object mon = new Object();
            long[] state = new long[3]; // grants, releasedAt, lastHolder
            state[2] = -1;
            List<Long> samples = new ArrayList<>();
            boolean[] stop = new boolean[1];
            List<Thread> threads = new ArrayList<>();
            List<Throwable> failures = new ArrayList<>();
            for (int c = 0; c < clients.size(); c++) {
                int me = c;
                Locker l = clients.get(c);
                threads.add(thread("handover", () -> {
                    while (true) {
                        synchronized (mon) {
                            if (stop[0]) {
                                return;
                            }
                        }
                        Locker.Held h = l.acquire(name, LONG_WAIT);
                        if (h == null) {
                            throw new IllegalStateException(v.label() + ": no hand-over within " + LONG_WAIT);
                        }
                        long now = System.nanoTime();
                        boolean stopping;
                        synchronized (mon) {
                            if (state[1] != 0 && state[2] != me && !stop[0]) {
                                samples.add(now - state[1]);
                            }
                            state[1] = 0;
                            state[0]++;
                            mon.notifyAll();
                            stopping = stop[0];
                        }
                        if (!stopping) {
                            Thread.sleep(hold.toMillis());
                        }
                        long grants;
                        synchronized (mon) {
                            grants = state[0];
                            state[2] = me;
                            state[1] = System.nanoTime();
                        }
                        h.release();
                        synchronized (mon) {
                            while (state[0] == grants && !stop[0]) {
                                mon.wait();
                            }
                        }
                    }
                }, failures));
            }
            long deadline = System.nanoTime() + seconds.toNanos() + hold.toNanos() * 5;
            synchronized (mon) {
                while (System.nanoTime() - deadline < 0 && failures.isEmpty()) {
                    mon.wait(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                }
                stop[0] = true;
                mon.notifyAll();
            }
            join(threads, LONG_WAIT.multipliedBy(waiters + 1), failures);
            if (samples.isEmpty()) {
                throw new IllegalStateException(v.label() + ": no hand-over in " + seconds);
            }
            return ms(median(samples));
        } finally {
            closeAll(clients);
        }
    }

    /**
     * A holder in a child JVM, a waiter here; the child is killed with SIGKILL once the waiter has been
     * waiting for a second: the time from the kill to the waiter's grant.
     */
    private double crash(Backend.Variant v, String name) throws Exception {
        try (Locker waiter = v.opener().open(target)) {
            List<String> cmd = ChildJvm.command();
            cmd.addAll(List.of("-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                    "-cp", System.getProperty("java.class.path"), CrashChild.class.getName(),
                    backend.key(), v.label(), target.uri(), Long.toString(target.lease().toMillis()),
                    Long.toString(target.timeout().toMillis()), name));
            Process child = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            try {
                CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
                    try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(),
                            StandardCharsets.UTF_8))) {
                        for (String s; (s = r.readLine()) != null; ) {
                            if (s.startsWith("@bench")) {
                                return s;
                            }
                        }
                        return "exited";
                    } catch (java.io.IOException e) {
                        return "exited: " + e;
                    }
                });
                String got = line.get(2, TimeUnit.MINUTES);
                if (!got.equals(CrashChild.ACQUIRED)) {
                    throw new IllegalStateException(v.label() + ": the child did not take the lock: " + got);
                }
                ExecutorService ex = Executors.newSingleThreadExecutor();
                try {
                    Future<Long> granted = ex.submit(() -> {
                        Locker.Held h = waiter.acquire(name, target.lease().multipliedBy(3).plus(LONG_WAIT));
                        long at = System.nanoTime();
                        if (h == null) {
                            throw new IllegalStateException(v.label() + ": not granted after the holder's crash");
                        }
                        h.release();
                        return at;
                    });
                    Thread.sleep(1000); // let the waiter queue up on the server first
                    long killedAt = System.nanoTime();
                    child.destroyForcibly();
                    long at = granted.get(target.lease().multipliedBy(3).plus(LONG_WAIT).toMillis() + 10_000,
                            TimeUnit.MILLISECONDS);
                    return ms(at - killedAt);
                } finally {
                    ex.shutdownNow();
                }
            } finally {
                child.destroyForcibly();
                child.waitFor(1, TimeUnit.MINUTES);
            }
        }
    }

    /** A new client each time: connect, then the first lock; the median of three. */
    private double connect(Backend.Variant v, String name) throws Exception {
        List<Long> samples = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            long t0 = System.nanoTime();
            try (Locker l = v.opener().open(target)) {
                Locker.Held h = l.acquire(name + "-" + i, LONG_WAIT);
                samples.add(System.nanoTime() - t0);
                h.release();
            }
        }
        return ms(median(samples));
    }

    /**
     * One client locks and unlocks {@code names} distinct names one after the other: the total time,
     * the heap still used after a GC per name (with the client still open), and per name what is left
     * on the server two seconds after the client closed.
     */
    private Map<String, Double> names(Backend.Variant v, String name) throws Exception {
        Thread.sleep(2000); // the same settling for what earlier scenarios left as for what this one leaves
        long objectsBefore = backend.serverObjects(target);
        double total;
        double heap;
        try (Locker l = v.opener().open(target)) {
            for (int i = 0; i < 20; i++) { // the client's first names load classes and fill pools
                lockUnlock(l, name + "-warm-" + i);
            }
            long before = heapAfterGc();
            long t0 = System.nanoTime();
            for (int i = 0; i < names; i++) {
                lockUnlock(l, name + "-" + i);
            }
            total = ms(System.nanoTime() - t0);
            heap = (heapAfterGc() - before) / (double) names;
        }
        Thread.sleep(2000); // let the server drop what it drops on its own (ZooKeeper's container nodes)
        double left = (backend.serverObjects(target) - objectsBefore) / (double) names;
        Map<String, Double> m = new LinkedHashMap<>();
        m.put(NAMES_TIME, total);
        m.put(NAMES_HEAP, heap);
        m.put(NAMES_LEFT, left);
        return m;
    }

    static long heapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static void lockUnlock(Locker l, String name) throws Exception {
        Locker.Held h = l.acquire(name, LONG_WAIT);
        if (h == null) {
            throw new IllegalStateException("a free lock '" + name + "' was not granted within " + LONG_WAIT);
        }
        h.release();
    }

    private List<Locker> open(Backend.Variant v, int n) throws Exception {
        ExecutorService ex = Executors.newFixedThreadPool(Math.min(n, 4));
        try {
            List<Future<Locker>> fs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                fs.add(ex.submit(() -> v.opener().open(target)));
            }
            List<Locker> out = new ArrayList<>();
            Exception failure = null;
            for (Future<Locker> f : fs) {
                try {
                    out.add(f.get(5, TimeUnit.MINUTES));
                } catch (Exception e) {
                    failure = e;
                }
            }
            if (failure != null) {
                closeAll(out);
                throw failure;
            }
            return out;
        } finally {
            ex.shutdown();
        }
    }

    private static void closeAll(List<Locker> lockers) {
        for (Locker l : lockers) {
            try {
                l.close();
            } catch (Exception e) {
                System.err.println("closing a client failed: " + e);
            }
        }
    }

    static double median(List<? extends Number> xs) {
        double[] a = xs.stream().mapToDouble(Number::doubleValue).sorted().toArray();
        int n = a.length;
        return n % 2 == 1 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
    }

    static double[] minMax(List<Double> xs) {
        double[] a = xs.stream().mapToDouble(Double::doubleValue).toArray();
        return new double[] {Arrays.stream(a).min().orElse(Double.NaN), Arrays.stream(a).max().orElse(Double.NaN)};
    }

    static double ms(double nanos) {
        return nanos / 1e6;
    }
}
