package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.GrantTime;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.history.History;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
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
    /** Checks that JUnit keeps a {@link GroupExecution.Alone} group's tests alone on their server. */
    private static final ServerSharing SHARING = new ServerSharing();

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
        SHARING.enter(contract().server(), this, testName);
    }

    @AfterEach
    final void closeEverythingOpened() throws Exception {
        try {
            closeOpened();
        } finally {
            SHARING.leave(contract().server(), this);
        }
    }

    private void closeOpened() throws Exception {
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

    /** A client whose grants carry {@code owner} as their holder's id ({@link LockOptions#owner()}). */
    final LockClient clientOwnedBy(String owner) {
        return track(contract().newClient(options().toBuilder().owner(owner).build()));
    }

    /**
     * {@code time} lies between {@code from} and {@code to} of this JVM's clock, give or take the safety
     * margin where it is the backend's clock (a server on this host, whose clock may be read at another
     * resolution or with a small offset).
     */
    final void assertWithinClocks(GrantTime time, Instant from, Instant to, String what) {
        Duration slack = time.source().backendClock() ? options().safetyMargin() : Duration.ZERO;
        assertThat(time.at()).as("since when it is held (%s): %s", what, time)
                .isBetween(from.minus(slack), to.plus(slack));
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

    /** Submits {@code body} to a thread of the test's own and returns once it runs. */
    final <T> Future<T> started(Callable<T> body) throws InterruptedException {
        CountDownLatch running = new CountDownLatch(1);
        Future<T> f = executor().submit(() -> {
            running.countDown();
            return body.call();
        });
        running.await();
        return f;
    }

    /**
     * Records the holder's validity in {@code grant}, as often as it can, until {@code stop} is set or
     * the holder is no longer valid.
     */
    final Future<?> watchValidity(History.Grant grant, BooleanSupplier isValid, AtomicBoolean stop) {
        return executor().submit(() -> {
            while (!stop.get() && grant.check(isValid)) {
                Thread.sleep(1); // the pace of observation
            }
            return null;
        });
    }

    /** Cuts {@code cut} off the network, recorded in {@code history} as a fault on {@code name}: when. */
    static long cutHolder(CuttableClient cut, History history, String name) {
        long cutAt = History.now();
        history.fault("network cut of the holder", name, cutAt);
        cut.cut();
        return cutAt;
    }

    /** Pauses (SIGSTOP) {@code child}, recorded in {@code history} as a fault on {@code name}: when. */
    static long pauseHolder(ChildHolder child, History history, String name) {
        long pausedAt = History.now();
        history.fault("SIGSTOP of child-" + child.pid(), name, pausedAt);
        child.pause();
        return pausedAt;
    }

    /** Kills (kill -9) {@code child}, recorded in {@code history} as a fault on {@code name}: when. */
    static long killHolder(ChildHolder child, History history, String name) {
        long killedAt = History.now();
        history.fault("kill -9 of child " + child.pid(), name, killedAt);
        child.kill();
        return killedAt;
    }

    /** Restarts the server, recorded in {@code history} as a fault on {@code name}: when it began. */
    final long restartServer(History history, String name) {
        long restartAt = History.now();
        history.fault("server restart", name, restartAt);
        contract().server().restart();
        return restartAt;
    }

    /** Sleeps until {@code lease} has passed since {@code pausedAt}, so that a pause is longer than the lease. */
    final void waitOutLease(long pausedAt) throws InterruptedException {
        long pausedFor = History.now() - pausedAt;
        if (pausedFor < lease().toNanos()) {
            // the fault is "paused for longer than the lease", even if the lock or permit moved on sooner
            Thread.sleep(Duration.ofNanos(lease().toNanos() - pausedFor).toMillis() + 1);
        }
    }

    /**
     * Asks the paused {@code child} to check its lease and write, resumes it, and records in
     * {@code grant} what it found: its reply to the check.
     */
    final ChildHolder.Reply resumeAndCheck(ChildHolder child, History.Grant grant) {
        long sentAt = child.send("check-then-write"); // read by the child only once it runs again
        child.resume();
        ChildHolder.Reply check = child.next(tryBound(Duration.ZERO));
        if (check.kind().equals("valid")) {
            grant.valid(sentAt);
        } else {
            grant.invalid(check.receivedAt());
        }
        return check;
    }

    /** When {@code grant} was granted, as recorded in {@code history}. */
    static long grantedAt(History history, History.Grant grant) {
        return history.events().stream().filter(e -> e.grant() == grant.id()).findFirst().orElseThrow().at();
    }

    /**
     * The wait of a contender that waits across a server restart: longer than any restart, so that the
     * server's own start time (a six-node Redis cluster took 45 s on a loaded two-core machine) never
     * ends it. A test bounds such a contender's grant from the holders' release instead, which is what
     * the library answers for; an interrupt ends the wait when the test does.
     */
    static final Duration ACROSS_RESTART = Duration.ofMinutes(10);

    /** An acquire of a lock or a permit that may fail while the server is down. */
    interface Acquire<T> {
        Optional<T> get() throws InterruptedException;
    }

    /** What an acquire across a restart got, and when it was requested. */
    record Attempt<T>(long requestedAt, Optional<T> got) {
    }

    /** Runs {@code acquire}, and once more if the server was down during the attempt, as an application would. */
    static <T> Attempt<T> acquireAcrossRestart(Acquire<T> acquire) throws InterruptedException {
        long requested = History.now();
        try {
            return new Attempt<>(requested, acquire.get());
        } catch (LockException e) {
            // the server was down during the attempt: a contender tries again, as an application would
            requested = History.now();
            return new Attempt<>(requested, acquire.get());
        }
    }

    /** The library's live threads, by {@link ServerContract#isLibraryThread}. */
    final Set<Thread> libraryThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
                .filter(contract()::isLibraryThread).collect(Collectors.toSet());
    }

    /**
     * Rule 10's check of threads: every library thread that was not in {@code before} ends within
     * {@code timeout + slack} (close() waits for its threads up to the timeout; allow it that once
     * more to be observed).
     */
    final void assertLibraryThreadsEnd(Set<Thread> before) {
        Awaitility.await("library threads to end").atMost(tryBound(Duration.ZERO))
                .pollInterval(Duration.ofMillis(50))
                .untilAsserted(() -> assertThat(startedSince(libraryThreads(), before)).isEmpty());
    }

    /** The names of the threads in {@code now} that were not in {@code before}, sorted. */
    private static List<String> startedSince(Set<Thread> now, Set<Thread> before) {
        return now.stream().filter(t -> !before.contains(t)).map(Thread::getName).sorted().collect(Collectors.toList());
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
