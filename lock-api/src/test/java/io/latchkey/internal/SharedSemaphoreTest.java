package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedSemaphore;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockLostException;
import io.latchkey.LockNotAcquiredException;
import io.latchkey.SemaphoreLease;
import io.latchkey.memory.InMemoryBackend;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.LockClients;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The shared layer's semaphores on the in-memory backend: permits counted, evidence driven, nothing kept. */
class SharedSemaphoreTest extends InMemoryFixture {

    static void pollUntil(java.util.function.BooleanSupplier condition, Duration bound, String what) throws InterruptedException {
        long end = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError(what + ": not within " + bound);
            }
            Thread.sleep(10); // the pace of polling, not a synchronisation
        }
    }

    static SemaphoreLease take(DistributedSemaphore semaphore) throws InterruptedException {
        return semaphore.tryAcquire(Duration.ofSeconds(5)).orElseThrow(() -> new AssertionError("no permit of " + semaphore));
    }

    @Test
    @DisplayName("contenders of three clients never hold more than N valid permits, and concurrent holders hold distinct slots")
    void neverMoreThanN() throws Exception {
        int permits = 3;
        List<SharedLockClient> three = List.of(newClient(), newClient(), newClient());
        Set<Integer> slotsHeld = ConcurrentHashMap.newKeySet();
        AtomicInteger holding = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        List<String> violations = new ArrayList<>();
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            DistributedSemaphore semaphore = three.get(t % 3).semaphore("warehouse", permits);
            workers.add(threads.submit(() -> {
                for (int round = 0; round < 15; round++) {
                    try (SemaphoreLease lease = take(semaphore)) {
                        int now = holding.incrementAndGet();
                        most.accumulateAndGet(now, Math::max);
                        if (!slotsHeld.add(lease.slot())) {
                            synchronized (violations) {
                                violations.add("slot " + lease.slot() + " held twice at once");
                            }
                        }
                        assertThat(lease.isValid()).isTrue();
                        Thread.sleep(2); // hold it a moment, so that holders overlap
                        slotsHeld.remove(lease.slot());
                        holding.decrementAndGet();
                    }
                }
                return null;
            }));
        }
        for (Future<?> w : workers) {
            w.get(60, TimeUnit.SECONDS);
        }
        assertThat(violations).isEmpty();
        assertThat(most.get()).as("most permits held at once").isLessThanOrEqualTo(permits).isGreaterThan(1);
        assertThat(server.semaphoreCount()).as("semaphores the server keeps after every permit was released").isZero();
    }

    @Test
    @DisplayName("the N+1-th waits, and gets the released slot with a higher token as soon as a holder closes")
    void nPlusOneWaitsForARelease() throws Exception {
        DistributedSemaphore a = newClient().semaphore("pool", 2);
        DistributedSemaphore b = newClient().semaphore("pool", 2);
        SemaphoreLease first = take(a);
        SemaphoreLease second = take(b);
        assertThat(Set.of(first.slot(), second.slot())).containsExactlyInAnyOrder(0, 1);
        DistributedSemaphore third = newClient().semaphore("pool", 2);
        assertThat(third.tryAcquire()).as("a third permit of two").isEmpty();

        Future<Optional<SemaphoreLease>> waiter = threads.submit(() -> third.tryAcquire(Duration.ofSeconds(10)));
        second.close();
        SemaphoreLease next = waiter.get(5, TimeUnit.SECONDS).orElseThrow();
        assertThat(next.slot()).isEqualTo(second.slot());
        assertThat(next.fencingToken()).isGreaterThan(second.fencingToken());
        assertThat(next.permits()).isEqualTo(2);
        assertThat(next.lockName()).isEqualTo("pool");
        assertThatThrownBy(() -> third.acquire(Duration.ZERO)).isInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining("semaphore 'pool'").hasMessageContaining("2 permits");
        first.close();
        next.close();
    }

    @Test
    @DisplayName("no reentrancy: the same thread takes another permit on every tryAcquire, until none is left")
    void noReentrancy() throws Exception {
        DistributedSemaphore semaphore = newClient().semaphore("twice", 2);
        SemaphoreLease one = take(semaphore);
        SemaphoreLease two = take(semaphore);
        assertThat(one.slot()).isNotEqualTo(two.slot());
        assertThat(semaphore.tryAcquire()).isEmpty();
        one.close();
        assertThat(two.isValid()).as("the other permit after one closed").isTrue();
        two.close();
    }

    @Test
    @DisplayName("another number of permits for a name in use is refused, naming both numbers: in this client at once, from another at acquire")
    void mismatchedPermits() throws Exception {
        SharedLockClient client = newClient();
        SemaphoreLease held = take(client.semaphore("jobs", 2));
        assertThatThrownBy(() -> client.semaphore("jobs", 3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'jobs'").hasMessageContaining("2 permits").hasMessageContaining("asked for 3");
        DistributedSemaphore other = newClient().semaphore("jobs", 3);
        assertThatThrownBy(other::tryAcquire).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'jobs'").hasMessageContaining("2 permits").hasMessageContaining("asked for 3");
        held.close();
        assertThat(other.tryAcquire()).as("once nobody holds it, another number starts afresh").isPresent()
                .get().satisfies(Lease::close);
    }

    @Test
    @DisplayName("bad input is an IllegalArgumentException naming the rule: permits out of 1..1000, a bad name, a negative wait")
    void badInput() {
        SharedLockClient client = newClient();
        assertThatThrownBy(() -> client.semaphore("x", 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1 to 1000 permits, got 0");
        assertThatThrownBy(() -> client.semaphore("x", 1001)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("got 1001");
        assertThatThrownBy(() -> client.semaphore("", 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not be empty");
        assertThatThrownBy(() -> client.semaphore("a\nb", 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control characters");
        assertThatThrownBy(() -> client.semaphore("x", 1).tryAcquire(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not be negative");
    }

    @Test
    @DisplayName("a semaphore and a lock of the same name are independent")
    void apartFromLocks() throws Exception {
        SharedLockClient client = newClient();
        try (Lease lock = client.lock("same").lock(Duration.ofSeconds(1));
                SemaphoreLease permit = take(client.semaphore("same", 1))) {
            assertThat(lock.isValid()).isTrue();
            assertThat(permit.isValid()).isTrue();
        }
    }

    @Test
    @DisplayName("a permit whose renewals stop turns invalid at lease - margin, lost() completes, and it is released in the background")
    void lossWhenRenewalStops() throws Exception {
        SharedLockClient client = newClient();
        InMemoryBackend backend = backends.get(0);
        SemaphoreLease lease = take(client.semaphore("silent", 1));
        backend.renewing.set(false);
        LockLostException lost = lease.lost().toCompletableFuture().get(LEASE.toMillis() * 3, TimeUnit.MILLISECONDS);
        assertThat(lost.getMessage()).contains("semaphore 'silent' permit 0").contains("memory semaphore 'silent'");
        assertThat(lease.isValid()).isFalse();
        assertThatThrownBy(lease::ensureValid).isInstanceOf(LockLostException.class);
        pollUntil(() -> backend.heldPermitCount() == 0, Duration.ofSeconds(5), "the lost permit released in the background");
        lease.close();
        lease.close();
        assertThat(client.trackedSemaphores()).isZero();
    }

    @Test
    @DisplayName("a loss reported by the backend ends the permit's validity at once")
    void backendLoss() throws Exception {
        SemaphoreLease lease = take(newClient().semaphore("taken", 2));
        CompletableFuture<LockLostException> lost = lease.lost().toCompletableFuture();
        backends.get(0).signalPermitLoss("taken", "session expired");
        assertThat(lost.get(1, TimeUnit.SECONDS).getMessage()).contains("session expired");
        assertThat(lease.isValid()).isFalse();
        assertThat(lease.remaining()).isZero();
    }

    @Test
    @DisplayName("a permit closed from another thread is released; closing again is harmless; a closed client releases what it holds")
    void closing() throws Exception {
        SharedLockClient client = newClient();
        DistributedSemaphore semaphore = client.semaphore("closing", 1);
        SemaphoreLease lease = take(semaphore);
        threads.submit(lease::close).get(5, TimeUnit.SECONDS);
        lease.close();
        assertThat(lease.isValid()).isFalse();
        assertThatThrownBy(lease::ensureValid).isInstanceOf(IllegalStateException.class);
        SemaphoreLease again = take(semaphore);
        assertThat(server.heldPermits("closing")).isEqualTo(1);
        client.close();
        assertThat(again.isValid()).isFalse();
        assertThat(server.heldPermits("closing")).isZero();
        assertThat(client.trackedSemaphores()).isZero();
        assertThatThrownBy(() -> client.semaphore("closing", 1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(semaphore::tryAcquire).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("a backend without semaphores refuses them with UnsupportedOperationException naming the backend")
    void backendWithoutSemaphores() {
        LockBackend locksOnly = locksOnlyBackend("test: one holder per name");
        try (LockClient client = LockClients.of("locks-only", locksOnly, OPTIONS)) {
            assertThatThrownBy(() -> client.semaphore("x", 2)).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("the locks-only backend").hasMessageContaining("does not offer semaphores")
                    .hasMessageContaining("'x'");
        }
    }

    @Test
    @DisplayName("names used once leave nothing tracked in the client")
    void namesLeaveNothing() throws Exception {
        SharedLockClient client = newClient();
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            try (SemaphoreLease lease = take(client.semaphore("once-" + i, 2))) {
                seen.add(lease.slot());
            }
        }
        assertThat(seen).containsExactly(0);
        assertThat(client.trackedSemaphores()).isZero();
        assertThat(server.semaphoreCount()).isZero();
    }
}
