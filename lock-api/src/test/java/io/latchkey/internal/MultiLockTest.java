package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockLostException;
import io.latchkey.LockNotAcquiredException;
import io.latchkey.MultiLease;
import io.latchkey.MultiLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** {@link LockClient#multiLock} on the in-memory backend: order, all or nothing, loss of one member, reentrancy. */
class MultiLockTest extends InMemoryFixture {

    /** Long enough for any step of these tests on a loaded machine; never reached when they pass. */
    private static final Duration PATIENT = LEASE.multipliedBy(10);

    @Test
    @DisplayName("the names are taken in String order, whatever order they were given in")
    void namesInGlobalOrder() {
        assertThat(newClient().multiLock("b", "c", "a").names()).containsExactly("a", "b", "c");
        assertThat(newClient().multiLock(List.of("Z", "a", "B")).names()).containsExactly("B", "Z", "a");
    }

    @Test
    @DisplayName("no name, a name twice, a bad name or a closed client is refused with a message naming it")
    void badInputRefused() {
        SharedLockClient client = newClient();
        assertThatThrownBy(client::multiLock).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one lock name");
        assertThatThrownBy(() -> client.multiLock("a", "b", "a")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[a, b, a]").hasMessageContaining("'a' twice");
        assertThatThrownBy(() -> client.multiLock("a", "bad\nname")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control character");
        assertThatThrownBy(() -> client.multiLock("a").tryLock(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("[a]").hasMessageContaining("negative");
        client.close();
        assertThatThrownBy(() -> client.multiLock("a")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    @DisplayName("a multi-lease holds every name with its own token; others wait for each name; close frees them all")
    void holdsEveryName() throws Exception {
        SharedLockClient mine = newClient();
        SharedLockClient other = newClient();
        long earlierA = other.lock("a").lock(PATIENT).fencingToken(); // closed below, a token for "a" drawn first
        other.close();
        other = newClient();

        try (MultiLease lease = mine.multiLock("b", "a").lock(PATIENT)) {
            assertThat(lease.leases()).extracting(Lease::lockName).containsExactly("a", "b");
            assertThat(lease.fencingToken("a")).isGreaterThan(earlierA);
            assertThat(lease.fencingToken("b")).isEqualTo(lease.lease("b").fencingToken());
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.remaining()).isPositive().isLessThanOrEqualTo(LEASE);
            assertThat(mine.multiLock("a", "b").isHeldByCurrentThread()).isTrue();
            assertThat(other.lock("a").tryLock()).isEmpty();
            assertThat(other.lock("b").tryLock()).isEmpty();
            assertThat(other.multiLock("b", "c").tryLock()).isEmpty();
            assertThat(server.isHeld("c")).as("c, taken by the refused multi-lock {b, c}? b comes first").isFalse();
            assertThatThrownBy(() -> lease.lease("c")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("[a, b]").hasMessageContaining("'c'");
        }
        assertThat(server.isHeld("a")).isFalse();
        assertThat(server.isHeld("b")).isFalse();
        try (Lease a = other.lock("a").lock(Duration.ZERO); Lease b = other.lock("b").lock(Duration.ZERO)) {
            assertThat(a.isValid() && b.isValid()).isTrue();
        }
    }

    @Test
    @DisplayName("all or nothing: when one name stays held the call returns empty after its wait, holding none")
    void allOrNothing() throws Exception {
        SharedLockClient mine = newClient();
        Lease c = newClient().lock("c").lock(PATIENT);
        Duration wait = Duration.ofMillis(300);

        long start = System.nanoTime();
        Optional<MultiLease> got = mine.multiLock("a", "b", "c").tryLock(wait);
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(got).isEmpty();
        assertThat(took).isGreaterThanOrEqualTo(wait).isLessThan(wait.plus(TIMEOUT.multipliedBy(3)));
        assertThat(server.isHeld("a")).as("a after the call").isFalse();
        assertThat(server.isHeld("b")).as("b after the call").isFalse();
        assertThat(mine.trackedNames()).as("names the client still tracks").isZero();
        assertThatThrownBy(() -> mine.multiLock("a", "c").lock(Duration.ZERO)).isInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining("[a, c]");
        c.close();
    }

    @Test
    @DisplayName("an interrupted wait throws InterruptedException and holds none of the names")
    void interruptedHoldsNone() throws Exception {
        SharedLockClient mine = newClient();
        Lease b = newClient().lock("b").lock(PATIENT);
        Future<Optional<MultiLease>> call = threads.submit(() -> mine.multiLock("a", "b").tryLock(PATIENT));
        while (!server.isHeld("a")) {
            TimeUnit.MILLISECONDS.sleep(5);
        }
        call.cancel(true);
        long deadline = System.nanoTime() + TIMEOUT.toNanos() * 4;
        while (server.isHeld("a") && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(5);
        }
        assertThat(server.isHeld("a")).as("a after the interrupted call").isFalse();
        b.close();
    }

    @Test
    @DisplayName("holders asking for {a, b} and {b, a} on two clients never deadlock, and never hold a name together")
    void oppositeOrdersNeverDeadlock() throws Exception {
        List<MultiLock> sides = List.of(newClient().multiLock("a", "b"), newClient().multiLock("b", "a"));
        ConcurrentHashMap<String, AtomicInteger> inside = new ConcurrentHashMap<>();
        AtomicInteger overlaps = new AtomicInteger();
        int rounds = 100;
        List<Future<Integer>> workers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            MultiLock side = sides.get(t % 2);
            workers.add(threads.submit(() -> {
                int done = 0;
                for (int i = 0; i < rounds; i++) {
                    try (MultiLease lease = side.lock(PATIENT)) {
                        for (String name : side.names()) {
                            if (inside.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                        }
                        Thread.onSpinWait();
                        for (String name : side.names()) {
                            inside.get(name).decrementAndGet();
                        }
                        done++;
                    }
                }
                return done;
            }));
        }
        for (Future<Integer> w : workers) {
            assertThat(w.get(PATIENT.toNanos() * 4, TimeUnit.NANOSECONDS)).isEqualTo(rounds);
        }
        assertThat(overlaps).as("times two holders were inside one name").hasValue(0);
    }

    @Test
    @DisplayName("the loss of one name invalidates the whole: lost() completes with it, the others stay held until close")
    void lossOfOneInvalidatesAll() throws Exception {
        MultiLease lease = newClient().multiLock("a", "b").lock(PATIENT);
        server.evict("a");

        LockLostException loss = lease.lost().toCompletableFuture().get(LEASE.toNanos() * 2, TimeUnit.NANOSECONDS);
        assertThat(loss.lockName()).isEqualTo("a");
        assertThat(lease.isValid()).isFalse();
        assertThat(lease.remaining()).isZero();
        assertThatThrownBy(lease::ensureValid).isInstanceOf(LockLostException.class).hasMessageContaining("'a'");
        assertThat(lease.lease("b").isValid()).isTrue();
        assertThat(server.isHeld("b")).isTrue();
        lease.close();
        assertThat(server.isHeld("b")).isFalse();
        assertThatThrownBy(lease::ensureValid).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    @DisplayName("a name lost while the call waits for the next fails the call, which then holds none")
    void lostWhileWaitingForTheNext() throws Exception {
        SharedLockClient mine = newClient();
        Lease b = newClient().lock("b").lock(PATIENT);
        Future<Optional<MultiLease>> call = threads.submit(() -> mine.multiLock("a", "b").tryLock(PATIENT));
        while (!server.isHeld("a")) {
            TimeUnit.MILLISECONDS.sleep(5);
        }
        server.evict("a");
        TimeUnit.NANOSECONDS.sleep(LEASE.toNanos()); // the renewal at a third of the lease finds "a" gone
        b.close();

        assertThatThrownBy(() -> call.get(PATIENT.toNanos(), TimeUnit.NANOSECONDS)).hasCauseInstanceOf(LockException.class)
                .cause().hasMessageContaining("'a'").hasMessageContaining("[a, b]").hasMessageContaining("lost");
        assertThat(server.isHeld("b")).as("b after the failed call").isFalse();
        assertThat(mine.trackedNames()).as("names the client still tracks").isZero();
    }

    @Test
    @DisplayName("a thread that holds a nests on it: closing the multi-lease leaves its own lease of the name held")
    void nestsOnTheThreadsOwnLease() throws Exception {
        SharedLockClient mine = newClient();
        try (Lease a = mine.lock("a").lock(PATIENT)) {
            try (MultiLease both = mine.multiLock("a", "b").lock(PATIENT)) {
                assertThat(both.fencingToken("a")).isEqualTo(a.fencingToken());
                assertThat(mine.lock("a").holdCount()).isEqualTo(2);
            }
            assertThat(a.isValid()).isTrue();
            assertThat(server.isHeld("a")).isTrue();
            assertThat(server.isHeld("b")).isFalse();
        }
        assertThat(server.isHeld("a")).isFalse();
    }
}
