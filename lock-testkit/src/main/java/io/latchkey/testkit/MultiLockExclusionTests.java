package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.MultiLease;
import io.latchkey.MultiLock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Future;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * All or none: a multi-lock excludes every other holder of each of its names, each name with its own
 * token; a call that cannot take one name within its wait, or is interrupted, holds none; a thread's
 * own lease of a name nests; and nothing of the names is left in the backend after close.
 */
abstract class MultiLockExclusionTests extends MultiLockGroup {

    @Test
    @DisplayName("every name is held, with a token above the name's earlier ones; others wait for each name; close frees all at once")
    void holdsEveryName() throws Exception {
        String x = name("x");
        String y = name("y");
        String z = name("z");
        String w = name("w");
        LockClient mine = client();
        LockClient other = client();
        long earlierX;
        try (Lease single = mine.lock(x).tryLock(patientWait()).orElseThrow()) {
            earlierX = single.fencingToken();
        }

        MultiLock all = mine.multiLock(z, x, y);
        assertThat(all.names()).containsExactly(List.of(x, y, z).stream().sorted().toArray(String[]::new));
        MultiLease lease = hold(all);

        assertThat(lease.isValid()).isTrue();
        assertThat(lease.fencingToken(x)).as("the multi-lease's token of %s", x).isGreaterThan(earlierX);
        assertThat(lease.leases()).extracting(Lease::lockName).containsExactlyElementsOf(all.names());
        assertThat(all.isHeldByCurrentThread()).isTrue();
        for (String name : List.of(x, y, z)) {
            assertThat(other.lock(name).tryLock()).as("lock %s while the multi-lock holds it", name).isEmpty();
        }
        assertThat(other.multiLock(y, w).tryLock()).as("multi-lock {y, w} while y is held").isEmpty();
        try (Lease free = other.lock(w).tryLock().orElseThrow(
                () -> new AssertionError("lock " + w + " stayed held after the refused multi-lock {y, w} returned"))) {
            assertThat(free.isValid()).isTrue();
        }

        lease.close();
        MultiLease next = other.multiLock(x, y, z).tryLock(tryBound(Duration.ZERO)).orElseThrow(
                () -> new AssertionError("the names stayed held after the multi-lease was closed"));
        for (String name : List.of(x, y, z)) {
            assertThat(next.fencingToken(name)).as("the next holder's token of %s", name)
                    .isGreaterThan(lease.fencingToken(name));
        }
        next.close();
        mine.close();
        other.close();
        contract().assertNothingLeftInBackend(List.of(x, y, z, w));
    }

    @Test
    @DisplayName("one name held by another: tryLock returns empty within wait + a timeout per name tried or released, holding none")
    void allOrNone() throws Exception {
        String x = name("x");
        String y = name("y");
        String z = name("z");
        LockClient mine = client();
        LockClient other = client();
        Lease heldY = track(other.lock(y).tryLock(patientWait()).orElseThrow());
        Duration wait = slack();

        long start = System.nanoTime();
        Optional<MultiLease> got = mine.multiLock(x, y, z).tryLock(wait);
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(got).as("multi-lock {x, y, z} while y is held").isEmpty();
        // x taken (within a round trip past the wait), y tried until the wait ran out (one more), x released
        // (one more); z never asked for
        assertThat(took).as("time until the multi-lock gave up").isLessThanOrEqualTo(tryBound(wait).plus(timeout().multipliedBy(2)));
        for (String name : List.of(x, z)) {
            Optional<Lease> free = other.lock(name).tryLock();
            assertThat(free).as("lock %s right after the multi-lock gave up", name).isPresent();
            free.get().close();
        }
        heldY.close();
    }

    @Test
    @DisplayName("an interrupted wait ends with InterruptedException and holds none of the names")
    void interruptedHoldsNone() throws Exception {
        String x = name("x");
        String y = name("y");
        LockClient other = client();
        Lease heldY = track(other.lock(y).tryLock(patientWait()).orElseThrow());
        MultiLock both = client().multiLock(x, y);
        Future<Optional<MultiLease>> call = started(() -> both.tryLock(patientWait()));

        awaitHeldElsewhere(other, x);
        call.cancel(true);
        try {
            call.get();
        } catch (CancellationException expected) {
            // the future says cancelled at once; the call ends on its own thread
        }
        Optional<Lease> free = other.lock(x).tryLock(tryBound(Duration.ZERO));
        assertThat(free).as("lock %s after the waiting multi-lock was interrupted", x).isPresent();
        free.get().close();
        heldY.close();
    }

    @Test
    @DisplayName("a thread that holds a name nests on its lease: closing the multi-lease keeps that name held")
    void nestsOnTheThreadsOwnLease() throws Exception {
        String x = name("x");
        String y = name("y");
        LockClient mine = client();
        LockClient other = client();
        Lease own = track(mine.lock(x).tryLock(patientWait()).orElseThrow());

        try (MultiLease both = mine.multiLock(x, y).tryLock(patientWait()).orElseThrow()) {
            assertThat(both.fencingToken(x)).as("the multi-lease's token of the nested name").isEqualTo(own.fencingToken());
            assertThat(mine.lock(x).holdCount()).isEqualTo(2);
        }

        assertThat(own.isValid()).isTrue();
        assertThat(other.lock(x).tryLock()).as("lock %s, still held by the thread's own lease", x).isEmpty();
        Optional<Lease> free = other.lock(y).tryLock(tryBound(Duration.ZERO));
        assertThat(free).as("lock %s after the multi-lease closed", y).isPresent();
        free.get().close();
    }

    /**
     * Returns once {@code name} is held by someone other than {@code probe}: tries it, and whenever the
     * try wins, gives it back at once and tries again, at most {@link #patientWait()}.
     */
    private void awaitHeldElsewhere(LockClient probe, String name) throws InterruptedException {
        long deadline = System.nanoTime() + patientWait().toNanos();
        while (System.nanoTime() < deadline) {
            Optional<Lease> got = probe.lock(name).tryLock();
            if (got.isEmpty()) {
                return;
            }
            got.get().close();
            Thread.sleep(10);
        }
        throw new AssertionError("lock " + name + " was never taken by the waiting multi-lock within " + patientWait());
    }
}
