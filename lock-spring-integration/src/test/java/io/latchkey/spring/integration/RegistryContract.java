package io.latchkey.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockLostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * The lock semantics of {@link LatchkeyLockRegistry} on one backend: two registries on two clients of one
 * server, as two processes of an application would have. A backend's test names the server and its
 * options; each test uses names of its own, so the classes of the module share one server per backend.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RegistryContract {

    /** The connection URI of the shared server with the backend's options. */
    abstract String uri();

    /** The {@code lease} option of {@link #uri()}. */
    abstract Duration lease();

    /** A bound for waits that assert no timing: only a broken lock makes them time out. */
    Duration patience() {
        return lease().multipliedBy(5);
    }

    private LockClient clientA;
    private LockClient clientB;
    LatchkeyLockRegistry a;
    LatchkeyLockRegistry b;
    private String prefix;
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeAll
    void connect() {
        clientA = LockClient.connect(uri());
        clientB = LockClient.connect(uri());
    }

    @AfterAll
    void disconnect() {
        threads.shutdownNow();
        clientA.close();
        clientB.close();
    }

    @BeforeEach
    void registries() {
        a = new LatchkeyLockRegistry(clientA);
        b = new LatchkeyLockRegistry(clientB);
        prefix = "si:" + getClass().getSimpleName() + ":" + UUID.randomUUID() + ":";
    }

    @AfterEach
    void releaseLeftovers() {
        // a failed test may leave this thread holding: release, so that the next test starts clean
        for (String key : List.of("k", "other")) {
            while (a.lease(name(key)).isPresent()) {
                unlockQuietly(a.obtain(name(key)));
            }
        }
    }

    private static void unlockQuietly(Lock lock) {
        try {
            lock.unlock();
        } catch (RuntimeException ignored) {
            // a lost lease says so at unlock: it is released all the same
        }
    }

    String name(String key) {
        return prefix + key;
    }

    boolean take(Lock lock) throws InterruptedException {
        return lock.tryLock(patience().toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Runs {@code task} on another thread and returns its result, within patience. */
    <T> T elsewhere(java.util.concurrent.Callable<T> task) throws Exception {
        return threads.submit(task).get(patience().toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void obtainReturnsOneLockPerKeyNamedByItsText() {
        assertThat(a.obtain(name("k"))).isSameAs(a.obtain(name("k")));
        assertThat(a.obtain(new StringBuilder(name("k")))).isSameAs(a.obtain(name("k")));
        assertThatThrownBy(() -> a.obtain(""))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock key ''")
                .hasMessageContaining("not a Latchkey lock name");
        assertThatThrownBy(() -> a.obtain("bad\nname")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("java.lang.String");
        assertThatThrownBy(() -> a.obtain("x".repeat(256))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.obtain(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> a.obtain(name("k")).newCondition())
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining(name("k"));
    }

    @Test
    void oneRegistryHoldsAndTheOtherWaitsForTheUnlock() throws Exception {
        Lock mine = a.obtain(name("k"));
        Lock theirs = b.obtain(name("k"));
        mine.lock();
        assertThat(theirs.tryLock()).isFalse();
        assertThat(theirs.tryLock(100, TimeUnit.MILLISECONDS)).isFalse();

        CountDownLatch asking = new CountDownLatch(1);
        Future<Long> taken = threads.submit(() -> {
            asking.countDown();
            theirs.lockInterruptibly();
            try {
                return b.lease(name("k")).orElseThrow().fencingToken();
            } finally {
                theirs.unlock();
            }
        });
        asking.await();
        long myToken = a.lease(name("k")).orElseThrow().fencingToken();
        mine.unlock();
        assertThat(taken.get(patience().toMillis(), TimeUnit.MILLISECONDS)).isGreaterThan(myToken);
        assertThat(a.lease(name("k"))).isEmpty();
    }

    @Test
    void threadsOfTwoRegistriesNeverOverlap() throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger mostInside = new AtomicInteger();
        List<Future<?>> workers = new ArrayList<>();
        for (LatchkeyLockRegistry registry : List.of(a, b, a, b)) {
            workers.add(threads.submit(() -> {
                for (int i = 0; i < 3; i++) {
                    registry.executeLocked(name("k"), () -> {
                        mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        Thread.sleep(20);
                        inside.decrementAndGet();
                    });
                }
                return null;
            }));
        }
        for (Future<?> worker : workers) {
            worker.get(patience().toMillis() * 12, TimeUnit.MILLISECONDS);
        }
        assertThat(mostInside).hasValue(1);
    }

    @Test
    void theHoldingThreadLocksAgainAtOnceAndReleasesAfterAsManyUnlocks() throws Exception {
        Lock mine = a.obtain(name("k"));
        assertThat(take(mine)).isTrue();
        long token = a.lease(name("k")).orElseThrow().fencingToken();
        assertThat(mine.tryLock()).isTrue();
        a.obtain(name("k")).lock();
        assertThat(LatchkeyLockRegistry.lease(mine)).get().extracting(Lease::fencingToken).isEqualTo(token);

        mine.unlock();
        mine.unlock();
        assertThat(b.obtain(name("k")).tryLock()).isFalse();
        // another thread of the same registry waits too: reentrancy is the holding thread's only
        assertThat(elsewhere(() -> a.obtain(name("k")).tryLock())).isFalse();
        mine.unlock();
        assertThat(elsewhere(() -> {
            Lock theirs = b.obtain(name("k"));
            boolean got = take(theirs);
            theirs.unlock();
            return got;
        })).isTrue();
    }

    @Test
    void onlyTheThreadThatLockedMayUnlock() throws Exception {
        Lock mine = a.obtain(name("k"));
        assertThatThrownBy(mine::unlock).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining(name("k")).hasMessageContaining("only the thread that locked it");
        assertThat(take(mine)).isTrue();
        Throwable other = elsewhere(() -> {
            try {
                mine.unlock();
                return null;
            } catch (IllegalMonitorStateException e) {
                return e;
            }
        });
        assertThat(other).isInstanceOf(IllegalMonitorStateException.class).hasMessageContaining(name("k"));
        assertThat(b.obtain(name("k")).tryLock()).as("still held after the refused unlock").isFalse();
        assertThat(a.lease(name("k"))).get().extracting(Lease::isValid).isEqualTo(true);
        mine.unlock();
        assertThatThrownBy(mine::unlock).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void aLockHeldPastItsTtlIsLostAndItsUnlockSaysSo() throws Exception {
        DistributedLock mine = a.obtain(name("k"));
        Duration ttl = Duration.ofSeconds(1);
        assertThat(mine.tryLock(patience(), ttl)).isTrue();
        Lease lease = a.lease(name("k")).orElseThrow();
        assertThatThrownBy(() -> a.renewLock(name("k"), Duration.ofMinutes(1)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("ttl");

        LockLostException lost = lease.lost().toCompletableFuture()
                .get(ttl.plus(patience()).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lost.getMessage()).contains(name("k"));
        assertThat(lease.isValid()).isFalse();
        assertThatThrownBy(mine::tryLock).isInstanceOf(LockLostException.class);
        assertThatThrownBy(() -> a.renewLock(name("k"))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("could not renew lock '" + name("k") + "'");
        assertThatThrownBy(mine::unlock).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining(name("k")).hasMessageContaining("lost or had expired");
        assertThat(a.lease(name("k"))).isEmpty();

        Lock theirs = b.obtain(name("k"));
        assertThat(take(theirs)).as("the other registry takes the lock the ttl ended").isTrue();
        theirs.unlock();
    }

    @Test
    void closingTheClientLosesTheLockAndFreesItForTheOther() throws Exception {
        LockClient own = LockClient.connect(uri());
        Lock mine;
        try {
            mine = new LatchkeyLockRegistry(own).obtain(name("k"));
            mine.lock();
        } finally {
            own.close(); // as the holder's process shuts down: its leases are released
        }
        Lock theirs = b.obtain(name("k"));
        assertThat(take(theirs)).isTrue();
        assertThatThrownBy(mine::unlock).isInstanceOf(ConcurrentModificationException.class);
        theirs.unlock();
    }

    @Test
    void renewingIsACheckOfTheHoldingThread() throws Exception {
        assertThatThrownBy(() -> a.renewLock(name("k"))).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("cannot renew");
        Lock mine = a.obtain(name("k"));
        mine.lock();
        a.renewLock(name("k"));
        a.renewLock(name("k"), Duration.ofSeconds(1));
        Throwable other = elsewhere(() -> {
            try {
                a.renewLock(name("k"));
                return null;
            } catch (IllegalMonitorStateException e) {
                return e;
            }
        });
        assertThat(other).isInstanceOf(IllegalMonitorStateException.class);
        mine.unlock();
    }

    @Test
    void expiringDropsTheUnusedLockObjectsOnly() throws Exception {
        Lock idle = a.obtain(name("other"));
        Lock held = a.obtain(name("k"));
        held.lock();
        long before = System.nanoTime();
        while (System.nanoTime() == before) {
            Thread.onSpinWait();
        }
        a.expireUnusedOlderThan(0);
        assertThat(a.obtain(name("other"))).isNotSameAs(idle);
        assertThat(a.obtain(name("k"))).isSameAs(held);
        held.unlock();
    }

    @Test
    void interruptsStopTheInterruptibleWaitsOnly() throws Exception {
        Lock mine = a.obtain(name("k"));
        mine.lock();
        Lock theirs = b.obtain(name("k"));

        CompletableFuture<Thread> waiter = new CompletableFuture<>();
        Future<Throwable> interruptible = threads.submit(() -> {
            waiter.complete(Thread.currentThread());
            try {
                theirs.lockInterruptibly();
                theirs.unlock();
                return null;
            } catch (InterruptedException e) {
                return e;
            }
        });
        waiter.get().interrupt();
        assertThat(interruptible.get(patience().toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(InterruptedException.class);

        CompletableFuture<Thread> locker = new CompletableFuture<>();
        Future<Boolean> uninterruptible = threads.submit(() -> {
            locker.complete(Thread.currentThread());
            theirs.lock();
            boolean flag = Thread.interrupted();
            theirs.unlock();
            return flag;
        });
        locker.get().interrupt();
        mine.unlock();
        assertThat(uninterruptible.get(patience().toMillis(), TimeUnit.MILLISECONDS))
                .as("lock() was granted after the interrupt and restored it").isTrue();

        Thread.currentThread().interrupt();
        assertThat(mine.tryLock()).isFalse();
        assertThat(Thread.interrupted()).isTrue();
    }
}
