package io.latchkey.testkit;

import io.latchkey.DistributedSemaphore;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.history.History;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * What every group of the {@link SemaphoreContract} shares: its hooks, the bounds of
 * {@link ContractGroup} derived from its options, unique semaphore names, and closing whatever a
 * test opened, in reverse order, after it. Not thread-safe except {@link #track}.
 */
abstract class SemaphoreGroup {

    private static final AtomicInteger TEST_THREADS = new AtomicInteger();

    private final Deque<AutoCloseable> opened = new ArrayDeque<>();
    private String testName = "test";

    abstract SemaphoreContract<?> contract();

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

    /** {@code wait + timeout + slack}, as {@link ContractGroup#tryBound}. */
    final Duration tryBound(Duration wait) {
        return wait.plus(timeout()).plus(slack());
    }

    /** {@code lease + timeout + slack}, as {@link ContractGroup#failoverBound}. */
    final Duration failoverBound() {
        return lease().plus(timeout()).plus(slack());
    }

    /** {@code lease + wake-up + slack}, as {@link ContractGroup#crashBound}, for a permit. */
    final Duration crashBound() {
        return lease().plus(ContractGroup.WAKE_UP_BUDGET).plus(slack());
    }

    /** {@code wake-up + slack}, as {@link ContractGroup#wakeUpBound}. */
    final Duration wakeUpBound() {
        return ContractGroup.WAKE_UP_BUDGET.plus(slack());
    }

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

    final ExecutorService executor() {
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "semaphore-contract-" + testName + "-" + TEST_THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        track(() -> {
            pool.shutdownNow();
            pool.awaitTermination(timeout().toMillis(), TimeUnit.MILLISECONDS);
        });
        return pool;
    }

    /** A semaphore name no other test uses. */
    final String name(String tag) {
        return "semaphore:" + testName + ":" + tag + ":" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    }

    final String name() {
        return name("sem");
    }

    /** Takes a permit with {@link #patientWait()}, failing if none is granted; closed after the test. */
    final SemaphoreLease hold(DistributedSemaphore semaphore) throws InterruptedException {
        Optional<SemaphoreLease> lease = semaphore.tryAcquire(patientWait());
        if (lease.isEmpty()) {
            throw new AssertionError("no permit of semaphore '" + semaphore.name() + "' (" + semaphore.permits()
                    + " permits) was granted within " + patientWait() + " although one should be free");
        }
        return track(lease.get());
    }

    /** A lease and its record in a history. */
    record Held(SemaphoreLease lease, History.Grant grant) {
    }

    /** Takes a permit like {@link #hold} and records it in {@code history}, checking its validity once. */
    final Held hold(DistributedSemaphore semaphore, History history, String actor) throws InterruptedException {
        long requested = History.now();
        SemaphoreLease lease = hold(semaphore);
        History.Grant grant = history.acquiredPermit(actor, semaphore.name(), lease.slot(), lease.fencingToken(),
                requested, History.now());
        grant.check(lease::isValid);
        return new Held(lease, grant);
    }

    /** Asks {@code child} for a permit and records it; fails unless it was granted. */
    final History.Grant childHolds(ChildHolder child, String name, int permits, History history) {
        ChildHolder.Reply got = child.acquirePermit(name, permits, patientWait(), tryBound(patientWait()));
        if (!got.kind().equals("acquired")) {
            throw child.failure("the child's answer to acquire-permit: " + got);
        }
        String[] tokenAndSlot = got.argument().split(" ");
        return history.acquiredPermit("child-" + child.pid(), name, Integer.parseInt(tokenAndSlot[1]),
                Long.parseLong(tokenAndSlot[0]), got.sentAt(), got.receivedAt());
    }

    static <T> T await(java.util.concurrent.Future<T> f, Duration bound, String what) throws Exception {
        return ContractGroup.await(f, bound, what);
    }
}
