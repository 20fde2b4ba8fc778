package io.latchkey.bench;

import static io.latchkey.bench.Scenarios.heapAfterGc;
import static io.latchkey.bench.Scenarios.median;
import static io.latchkey.bench.Scenarios.ms;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The held scenario, Latchkey only: what holding many locks at once costs one client and its server.
 * One client takes N distinct names one after the other, holds them all for one lease and a second,
 * then releases them.
 */
final class HeldLocks {

    static final String COUNT = "held (Latchkey only): locks held at once by one client";
    static final String ACQUIRE_P50 = "held: acquire per new name, median (ms)";
    static final String ACQUIRE_MEAN = "held: acquire per new name, total / N (ms)";
    static final String HEAP = "held: heap after GC per held lock (bytes)";
    static final String THREADS = "held: live threads per held lock";
    static final String OPS = "held: server operations per held lock per second (Redis commands, those run by scripts"
            + " included; ZooKeeper packets; etcd gRPC messages; PostgreSQL statements; – not counted)";
    static final String VALID = "held: leases valid at the end of the hold";
    static final String RELEASE = "held: release per lock, total / N (ms)";

    /** The cap on Kafka, where every held lock is a topic, a consumer group and a consumer with a heartbeat thread of its own. */
    static final int KAFKA_CAP = 1000;

    private static final Duration LONG_WAIT = Duration.ofSeconds(60);

    private HeldLocks() {
    }

    /**
     * Takes {@code n} names {@code name-0 … name-(n-1)} with one new Latchkey client and holds them for
     * one lease and a second: the time of an acquisition (median and mean), what holding costs the client
     * per held lock (heap after a GC and live threads, each against the same open client holding
     * nothing), the operations the server ran per held lock and second of the hold where
     * {@link Backend#serverOperations} counts them, how many leases were still valid when the hold ended,
     * and the time of a release.
     */
    static Map<String, Double> measure(Backend backend, Target target, int n, String name) throws Exception {
        Map<String, Double> m = new LinkedHashMap<>();
        m.put(COUNT, (double) n);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        try (LockClient client = LockClient.connect(target.latchkeyUri())) {
            for (int i = 0; i < 20; i++) { // the client's first names load classes and fill pools
                take(client, name + "-warm-" + i).close();
            }
            long heapBefore = heapAfterGc();
            int threadsBefore = threads.getThreadCount();
            List<Lease> leases = new ArrayList<>(n);
            try {
                List<Long> acquire = new ArrayList<>(n);
                long t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    long a = System.nanoTime();
                    leases.add(take(client, name + "-" + i));
                    acquire.add(System.nanoTime() - a);
                }
                m.put(ACQUIRE_P50, ms(median(acquire)));
                m.put(ACQUIRE_MEAN, ms(System.nanoTime() - t0) / n);
                long opsBefore = backend.serverOperations(target);
                long from = System.nanoTime();
                Thread.sleep(target.lease().plusSeconds(1).toMillis());
                long opsAfter = backend.serverOperations(target);
                double heldSeconds = (System.nanoTime() - from) / 1e9;
                m.put(VALID, (double) leases.stream().filter(Lease::isValid).count());
                int threadsHolding = threads.getThreadCount();
                m.put(HEAP, (heapAfterGc() - heapBefore) / (double) n);
                m.put(THREADS, (threadsHolding - threadsBefore) / (double) n);
                // Redis counts the first reading in the second
                m.put(OPS, opsBefore < 0 ? Double.NaN
                        : (opsAfter - opsBefore - (backend == Backend.REDIS ? 1 : 0)) / (double) n / heldSeconds);
            } finally {
                long r0 = System.nanoTime();
                for (Lease l : leases) {
                    l.close();
                }
                if (leases.size() == n) {
                    m.put(RELEASE, ms(System.nanoTime() - r0) / n);
                }
            }
        }
        return m;
    }

    private static Lease take(LockClient client, String name) throws InterruptedException {
        return client.lock(name).tryLock(LONG_WAIT).orElseThrow(
                () -> new IllegalStateException("a free lock '" + name + "' was not granted within " + LONG_WAIT));
    }
}
