package io.latchkey.testkit;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.CuttableClient;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * What every group of {@link LockContract} ({@link ContractGroup}) and of {@link SemaphoreContract}
 * ({@link SemaphoreGroup}) shares: the contract's hooks, the bounds derived from its options, unique
 * names, the test's clients, child holders and threads, and closing whatever a test opened, in
 * reverse order, after it.
 *
 * <p>One instance per test (the JUnit default); not thread-safe except {@link #track}.
 */
abstract class KitGroup {

    private static final AtomicInteger TEST_THREADS = new AtomicInteger();

    /**
     * The wake-up budget: how long a waiter that is already connected and waiting may take, once the
     * lock is free in the server, to notice and be granted it (the server's notification and the
     * waiter's one acquire round trip). Part of rule 5's bound ({@link #crashBound()}) and of the
     * wake-up after a release ({@link #wakeUpBound()}).
     */
    static final Duration WAKE_UP_BUDGET = Duration.ofMillis(250);

    private final String threadPrefix;
    private final String namePrefix;
    private final String defaultTag;
    private final Deque<AutoCloseable> opened = new ArrayDeque<>();
    private String testName = "test";

    /**
     * @param threadPrefix how the names of the test's own threads start
     * @param namePrefix how the names the group takes start
     * @param defaultTag the tag of {@link #name()}
     */
    KitGroup(String threadPrefix, String namePrefix, String defaultTag) {
        this.threadPrefix = threadPrefix;
        this.namePrefix = namePrefix;
        this.defaultTag = defaultTag;
    }

    /** The contract this group belongs to (the enclosing instance). */
    abstract ServerContract<?> contract();

    @BeforeEach
    final void rememberTestName(TestInfo info) {
        testName = info.getTestMethod().map(m -> m.getName()).orElse("test");
    }

    @AfterEach
    final void closeEverythingOpened() throws Exception {
        Exception first = null;
        while (true) {
            AutoCloseable c;
            synchronized (opened) {
                c = opened.pollFirst();
            }
            if (c == null) {
                break;
            }
            try {
                c.close();
            } catch (io.latchkey.LockBackendUnavailableException e) {
                // a fault test left the backend unreachable for this lease: it expires on its own
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** Closes {@code c} after the test, before everything opened earlier. */
    final <T extends AutoCloseable> T track(T c) {
        synchronized (opened) {
            opened.addFirst(c);
        }
        return c;
    }

    final LockOptions options() {
        return contract().options();
    }

    final Duration lease() {
        return options().lease();
    }

    final Duration timeout() {
        return options().timeout();
    }

    final Duration slack() {
        return contract().slack();
    }

    /** Rule 2's bound on a {@code tryLock(wait)} call: {@code wait + timeout + slack}. */
    final Duration tryBound(Duration wait) {
        return wait.plus(timeout()).plus(slack());
    }

    /**
     * A bound on failover after a holder went silent, with a round trip to spare:
     * {@code lease + timeout + slack}. For waits and for checks where the contender may have to
     * connect or retry first; rule 5's own assertion is the tighter {@link #crashBound()}.
     */
    final Duration failoverBound() {
        return lease().plus(timeout()).plus(slack());
    }

    /**
     * Rule 5's bound, measured from the kill of the holder to the grant returned to a contender that
     * was already waiting: {@code lease + WAKE_UP_BUDGET + slack}.
     *
     * <p>Why these terms: {@code lease} is what README promises as the failover bound, so a backend
     * must account for its server's tick or expiry granularity inside it (a ZooKeeper session or an
     * etcd TTL of exactly {@code lease} overshoots by up to one tick); {@link #WAKE_UP_BUDGET} is the
     * waiter's notification and acquire round trip; {@link ServerContract#slack()} is the scheduling of
     * the test's, the child's and the server's threads on a loaded machine (the kill itself, the
     * contender's thread waking, a GC). There is deliberately no {@code timeout}: the contender is
     * already connected and waiting, it needs no new connection, and a bound with a whole round trip
     * of slack (the earlier {@code lease + timeout + slack}) would hide an expiry that runs seconds
     * late. An overshoot smaller than {@code slack} is not caught here; a backend measures its own
     * tick against a tighter bound in its own tests.
     */
    final Duration crashBound() {
        return lease().plus(WAKE_UP_BUDGET).plus(slack());
    }

    /**
     * How soon a waiter of another client that was already waiting is granted a lock after its holder
     * released it: {@code WAKE_UP_BUDGET + slack}, below {@code lease} with the contract's options, so
     * that a waiter that notices only on expiry or on its own retry timer fails the check.
     */
    final Duration wakeUpBound() {
        return WAKE_UP_BUDGET.plus(slack());
    }

    /** A wait long enough that only a broken lock makes an acquire in a busy test time out. */
    final Duration patientWait() {
        return failoverBound().multipliedBy(2);
    }

    final LockClient client() {
        return track(contract().newClient());
    }

    final CuttableClient cuttableClient() {
        return track(contract().newCuttableClient());
    }

    final ChildHolder childHolder() {
        return track(ChildHolder.start(contract().childUri(), contract().childJvmOptions()));
    }

    /** An executor for the test's own threads, shut down after the test. */
    final ExecutorService executor() {
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, threadPrefix + testName + "-" + TEST_THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        track(() -> {
            pool.shutdownNow();
            pool.awaitTermination(timeout().toMillis(), TimeUnit.MILLISECONDS);
        });
        return pool;
    }

    /** A name no other test uses: the test's name, a tag and a random suffix. */
    final String name(String tag) {
        return namePrefix + testName + ":" + tag + ":" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    }

    final String name() {
        return name(defaultTag);
    }

    /** Runs {@code body} and returns how long it took. */
    static Duration timed(Callable<?> body) throws Exception {
        long start = System.nanoTime();
        body.call();
        return Duration.ofNanos(System.nanoTime() - start);
    }

    /** Waits for {@code f}, failing (not hanging) if it takes longer than {@code bound}. */
    static <T> T await(Future<T> f, Duration bound, String what) throws Exception {
        try {
            return f.get(bound.toNanos(), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            f.cancel(true);
            throw new AssertionError(what + " did not finish within " + bound, e);
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception) {
                throw (Exception) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw e;
        }
    }
}
