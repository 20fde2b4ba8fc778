package io.latchkey.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockLostException;
import io.latchkey.LockState;
import io.latchkey.testkit.fault.ChildHolder;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import net.javacrumbs.shedlock.test.support.FuzzTester;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * ShedLock's own provider suite ({@code shedlock-test-support}'s
 * {@link AbstractExtensibleLockProviderIntegrationTest}, its fuzz tester among it) on one Latchkey
 * backend, plus what Latchkey adds: the task's lease, its token, the loss signal at
 * {@code lockAtMostFor}, an extension that keeps the grant, and no nesting with the thread's own lease.
 *
 * <p>A backend's class gives the URI of its shared server. Each class keeps three things for all its
 * tests: the client the provider takes locks on, another client that reads the backend for
 * {@code assertLocked}/{@code assertUnlocked} ({@link io.latchkey.DistributedLock#inspect()}), and the
 * provider.
 */
abstract class ShedLockProviderContract extends AbstractExtensibleLockProviderIntegrationTest {

    private static final Map<Class<?>, Clients> CLIENTS = new ConcurrentHashMap<>();

    /** The URI of the backend's server, with the options this class runs with. */
    abstract String uri();

    /** The {@code lease} option of {@link #uri()}: how long a silent holder keeps a lock. */
    abstract Duration lease();

    /** The provider's client, another client reading the backend, and the provider. */
    record Clients(LockClient holder, LockClient observer, LatchkeyLockProvider provider) {
        void close() {
            try {
                holder.close();
            } finally {
                observer.close();
            }
        }
    }

    Clients clients() {
        return CLIENTS.computeIfAbsent(getClass(), k -> {
            LockClient holder = LockClient.connect(uri());
            return new Clients(holder, LockClient.connect(uri()), new LatchkeyLockProvider(holder));
        });
    }

    @AfterAll
    static void closeClients(TestInfo info) {
        Clients clients = CLIENTS.remove(info.getTestClass().orElseThrow());
        if (clients != null) {
            clients.close();
        }
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return clients().provider();
    }

    @Override
    protected void assertUnlocked(String lockName) {
        LockState state = inspect(lockName);
        assertThat(state.isHeld()).as("lock '%s' as another client reads it: %s", lockName, state).isFalse();
    }

    @Override
    protected void assertLocked(String lockName) {
        LockState state = inspect(lockName);
        assertThat(state.isHeld()).as("lock '%s' as another client reads it: %s", lockName, state).isTrue();
    }

    LockState inspect(String lockName) {
        try {
            return clients().observer().lock(lockName).inspect();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while inspecting lock '" + lockName + "'", e);
        }
    }

    /** Whether another client reads the lock free within {@code bound}, asking every 20 ms. */
    boolean freeWithin(String lockName, Duration bound) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (inspect(lockName).isHeld()) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            sleepFor(Duration.ofMillis(20));
        }
        return true;
    }

    /**
     * ShedLock's fuzz tester with one run per worker thread instead of a hundred (ten for its short
     * one): 13 grants of one name and 4 of another, for a backend whose grant costs a second or more.
     */
    void fuzzWithFewerGrants() throws ExecutionException, InterruptedException {
        new FuzzTester(getLockProvider(), Duration.ofMillis(1), Duration.ofMinutes(5), 1).doFuzzTest();
    }

    static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(java.time.Instant.now(), name, atMost, atLeast);
    }

    static String freshName() {
        return "shedlock-" + UUID.randomUUID();
    }

    /** A bound for what the backend does in one round trip or a background release, with room for a busy machine. */
    Duration roundTrip() {
        return Duration.ofSeconds(5);
    }

    /** On a thread of its own, as a scheduler's: ShedLock's suite leaves locks it never unlocks on the test's. */
    @Test
    void theTaskReadsItsLeaseAndTheTokenTheBackendRecords() throws Exception {
        String name = freshName();
        AtomicReference<Optional<Lease>> seen = new AtomicReference<>();
        AtomicReference<LockState> recorded = new AtomicReference<>();
        AtomicReference<Optional<Lease>> afterwards = new AtomicReference<>();
        onAThreadOfItsOwn(() -> {
            new DefaultLockingTaskExecutor(getLockProvider()).executeWithLock((Runnable) () -> {
                seen.set(LatchkeyLockProvider.currentLease());
                recorded.set(inspect(name));
            }, config(name, Duration.ofMinutes(1), Duration.ZERO));
            afterwards.set(LatchkeyLockProvider.currentLease());
        });

        Lease lease = seen.get().orElseThrow(() -> new AssertionError("no lease on the task's thread"));
        assertThat(lease.lockName()).isEqualTo(name);
        assertThat(recorded.get().token()).as("the token the backend records").hasValue(lease.fencingToken());
        assertThat(afterwards.get()).as("on the thread after the task").isEmpty();
        assertThat(lease.isValid()).as("after the task").isFalse();
        assertThatThrownBy(lease::ensureValid).isInstanceOf(IllegalStateException.class).hasMessageContaining(name);
        assertUnlocked(name);
    }

    static void onAThreadOfItsOwn(Runnable body) throws Exception {
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            thread.submit(body).get(1, TimeUnit.MINUTES);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw e;
        } finally {
            thread.shutdownNow();
        }
    }

    @Test
    void lockAtMostForEndsTheLeaseWhileTheTaskRunsTellsItAndFreesTheLock() throws Throwable {
        String name = freshName();
        Duration atMost = Duration.ofMillis(500);
        AtomicReference<LockLostException> loss = new AtomicReference<>();
        AtomicReference<Boolean> freeWhileRunning = new AtomicReference<>();
        new DefaultLockingTaskExecutor(getLockProvider()).executeWithLock((Runnable) () -> {
            Lease lease = LatchkeyLockProvider.currentLease().orElseThrow();
            assertThat(lease.isValid()).isTrue();
            try {
                loss.set(lease.lost().toCompletableFuture().get(atMost.plus(roundTrip()).toMillis(),
                        TimeUnit.MILLISECONDS));
            } catch (Exception e) {
                throw new AssertionError("no loss signal within lockAtMostFor + " + roundTrip(), e);
            }
            assertThat(lease.isValid()).isFalse();
            // the task is told first, then the lock is released: free within one release
            freeWhileRunning.set(freeWithin(name, roundTrip()));
        }, config(name, atMost, Duration.ZERO));

        assertThat(loss.get().reason()).isEqualTo(LockLostException.Reason.AT_MOST);
        assertThat(loss.get().getMessage()).contains(name, "lockAtMostFor");
        assertThat(freeWhileRunning.get()).as("free for another node while the task still ran").isTrue();
    }

    @Test
    void anExtensionKeepsTheGrantAndItsTokenAndMovesTheBound() {
        String name = freshName();
        Duration atMost = Duration.ofMillis(500);
        AtomicReference<Boolean> ranToTheEnd = new AtomicReference<>(false);
        new DefaultLockingTaskExecutor(getLockProvider()).executeWithLock((Runnable) () -> {
            Lease lease = LatchkeyLockProvider.currentLease().orElseThrow();
            long token = lease.fencingToken();
            LockExtender.extendActiveLock(Duration.ofMinutes(5), Duration.ZERO);
            assertThat(LatchkeyLockProvider.currentLease()).as("the lease after the extension")
                    .containsSame(lease);
            // past the first lockAtMostFor, with room for a late timer: the lease goes on
            assertThatThrownBy(() -> lease.lost().toCompletableFuture().get(atMost.plus(atMost).toMillis(),
                    TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.fencingToken()).isEqualTo(token);
            assertThat(inspect(name).token()).as("the grant the backend records").hasValue(token);
            ranToTheEnd.set(true);
        }, config(name, atMost, Duration.ZERO));
        assertThat(ranToTheEnd.get()).isTrue();
        assertUnlocked(name);
    }

    /**
     * Another node that dies holding the lock frees it within Latchkey's {@code lease} (plus a waiter's
     * wake-up and a round trip), not after a {@code lockAtMostFor} of ten minutes as ShedLock's own
     * providers keep a dead node's lock.
     */
    @Test
    void aKilledNodesLockIsFreeWithinTheLeaseNotAfterLockAtMostFor() {
        String name = freshName();
        LockConfiguration tenMinutes = config(name, Duration.ofMinutes(10), Duration.ZERO);
        try (ChildHolder node = ChildHolder.start(uri())) {
            ChildHolder.Reply got = node.acquire(name, Duration.ofSeconds(10), Duration.ofSeconds(30));
            assertThat(got.kind()).as("the other node's answer: %s", got).isEqualTo("acquired");
            assertThat(getLockProvider().lock(tenMinutes)).as("while the other node holds it").isEmpty();
            node.kill();
            long killedAt = System.nanoTime();
            Duration bound = lease().plus(Duration.ofMillis(250)).plus(roundTrip());
            Optional<SimpleLock> taken = getLockProvider().lock(tenMinutes);
            while (taken.isEmpty() && System.nanoTime() - killedAt < bound.toNanos()) {
                sleepFor(Duration.ofMillis(50));
                taken = getLockProvider().lock(tenMinutes);
            }
            assertThat(taken).as("taken within %s of the kill", bound).isNotEmpty();
            taken.get().unlock();
        }
    }

    /**
     * An extension after {@code lockAtMostFor} passed is refused with ShedLock's own exception, which the
     * executor's unlock of the old lock afterwards does not hide.
     */
    @Test
    void anExtensionAfterLockAtMostForIsRefusedWithShedLocksException() {
        String name = freshName();
        Duration atMost = Duration.ofMillis(200);
        assertThatThrownBy(() -> new DefaultLockingTaskExecutor(getLockProvider()).executeWithLock((Runnable) () -> {
            LatchkeyLockProvider.currentLease().orElseThrow().lost().toCompletableFuture()
                    .orTimeout(atMost.plus(roundTrip()).toMillis(), TimeUnit.MILLISECONDS).join();
            LockExtender.extendActiveLock(Duration.ofMinutes(1), Duration.ZERO);
        }, config(name, atMost, Duration.ZERO))).isInstanceOf(LockExtender.LockCanNotBeExtendedException.class);
        assertThat(freeWithin(name, roundTrip())).as("free after the refused extension").isTrue();
    }

    @Test
    void theProviderNeverNestsInALeaseTheThreadHoldsThroughTheClient() throws InterruptedException {
        String name = freshName();
        try (Lease own = clients().holder().lock(name).tryLock().orElseThrow()) {
            assertThat(getLockProvider().lock(config(name, Duration.ofMinutes(1), Duration.ZERO)))
                    .as("ShedLock's lock while the thread holds a Latchkey lease of the name").isEmpty();
            assertThat(own.isValid()).isTrue();
        }
        Optional<SimpleLock> taken = getLockProvider().lock(config(name, Duration.ofMinutes(1), Duration.ZERO));
        assertThat(taken).isNotEmpty();
        taken.get().unlock();
    }

    @Test
    void theLeaseIsShedLocksToClose() {
        String name = freshName();
        SimpleLock lock = getLockProvider().lock(config(name, Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
        try {
            Lease lease = LatchkeyLockProvider.currentLease().orElseThrow();
            assertThatThrownBy(lease::close)
                    .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining(name);
            assertLocked(name);
        } finally {
            lock.unlock();
        }
        assertUnlocked(name);
    }
}
