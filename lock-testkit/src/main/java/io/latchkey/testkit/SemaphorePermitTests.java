package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedSemaphore;
import io.latchkey.Holder;
import io.latchkey.LockClient;
import io.latchkey.LockState;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.fault.ChildHolder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every holder agrees on the number of permits; no reentrancy (each {@code tryAcquire} takes another
 * permit); a lease may be closed from any thread, closing twice is harmless, and closing never frees
 * another holder's permit.
 */
abstract class SemaphorePermitTests extends SemaphoreGroup {

    @Test
    @DisplayName("another number of permits for a semaphore in use is an IllegalArgumentException naming both numbers,"
            + " from the same client, another client and another process")
    void mismatchedPermitsAreRefused() throws Exception {
        String name = name();
        LockClient client = client();
        SemaphoreLease held = hold(client.semaphore(name, 2));

        assertThatThrownBy(() -> client.semaphore(name, 3)).as("the same client")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(name)
                .hasMessageFindingMatch("\\b2\\b").hasMessageFindingMatch("\\b3\\b");
        DistributedSemaphore other = client().semaphore(name, 3);
        assertThatThrownBy(() -> other.tryAcquire(tryBound(Duration.ZERO))).as("another client")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(name)
                .hasMessageFindingMatch("\\b2\\b").hasMessageFindingMatch("\\b3\\b");
        ChildHolder child = childHolder();
        ChildHolder.Reply refused = child.acquirePermit(name, 4, Duration.ZERO, tryBound(Duration.ZERO));
        assertThat(refused.kind() + " " + refused.argument()).as("another process")
                .startsWith("error java.lang.IllegalArgumentException").containsPattern("\\b2\\b").containsPattern("\\b4\\b");
        assertThat(held.isValid()).as("the holder after the refused requests").isTrue();
    }

    @Test
    @Tag("inspection") // with the inspection group: -Dgroups=inspection
    @DisplayName("a held permit is not a held lock: the list of held locks under a prefix names the lock, not the"
            + " semaphore of another name under it")
    void heldPermitsAreNotListedAsLocks() throws Exception {
        String prefix = name() + "/";
        LockClient client = client();
        hold(client.semaphore(prefix + "semaphore", 2));
        track(client.lock(prefix + "lock").tryLock(patientWait()).orElseThrow());
        assertThat(client().list(prefix)).containsExactly(prefix + "lock");
    }

    @Test
    @Tag("inspection") // with the inspection group: -Dgroups=inspection
    @DisplayName("inspect reads each slot: all free before any grant; each held permit's owner, thread, token, a"
            + " time left within the lease and its grant time, the other slot free, the same a lease later; all free"
            + " after the releases, and nothing left in the backend")
    void inspectReadsEachSlot() throws Exception {
        String name = name();
        LockClient observer = client();
        DistributedSemaphore seen = observer.semaphore(name, 3);
        List<LockState> allFree = List.of(LockState.free(name), LockState.free(name), LockState.free(name));
        assertThat(seen.inspect()).as("before any grant").isEqualTo(allFree);

        Instant before = Instant.now();
        SemaphoreLease a = hold(clientOwnedBy("permit-a").semaphore(name, 3));
        SemaphoreLease b = hold(clientOwnedBy("permit-b").semaphore(name, 3));
        Instant after = Instant.now();
        List<LockState> slots = seen.inspect();
        assertThat(slots).as("one state per slot").hasSize(3);
        assertPermit(slots.get(a.slot()), "permit-a", a, before, after);
        assertPermit(slots.get(b.slot()), "permit-b", b, before, after);
        int free = 3 - a.slot() - b.slot(); // slots 0, 1 and 2
        assertThat(slots.get(free)).as("the slot no permit holds").isEqualTo(LockState.free(name));

        Thread.sleep(lease().toMillis()); // a lease of renewals: the records stay the holders'
        List<LockState> later = seen.inspect();
        for (SemaphoreLease held : List.of(a, b)) {
            LockState slot = later.get(held.slot());
            assertThat(slot.holder()).as("slot %s a lease later", held.slot()).isEqualTo(slots.get(held.slot()).holder());
            assertThat(slot.token()).as("slot %s's token a lease later", held.slot()).hasValue(held.fencingToken());
            assertThat(slot.since()).as("slot %s's grant time a lease later", held.slot())
                    .isEqualTo(slots.get(held.slot()).since());
        }

        a.close();
        b.close();
        assertThat(seen.inspect()).as("after the releases").isEqualTo(allFree);
        observer.close();
        contract().assertNothingLeftInBackend(List.of(name));
    }

    private void assertPermit(LockState slot, String owner, SemaphoreLease lease, Instant before, Instant after) {
        Holder holder = slot.holder().orElseThrow(() -> new AssertionError("no holder in slot " + lease.slot() + ": " + slot));
        assertThat(holder.owner()).as("the owner of slot %s: %s", lease.slot(), slot).isEqualTo(owner);
        assertThat(holder.thread()).as("the thread that took slot %s: %s", lease.slot(), slot)
                .isEqualTo(Thread.currentThread().getName());
        assertThat(slot.token()).as("the token of slot %s: %s", lease.slot(), slot).hasValue(lease.fencingToken());
        assertThat(slot.waiters()).as("waiters per slot: %s", slot).isEmpty();
        slot.expiresIn().ifPresent(left -> assertThat(left).as("the time left of slot %s", lease.slot()).isPositive()
                .isLessThanOrEqualTo(lease()));
        assertWithinClocks(slot.since().orElseThrow(() -> new AssertionError("no grant time in " + slot)), before, after,
                "a permit granted without a wait");
    }

    @Test
    @DisplayName("a number of permits outside 1..1000 is an IllegalArgumentException")
    void permitsOutOfRangeAreRefused() {
        LockClient client = client();
        assertThatThrownBy(() -> client.semaphore(name(), 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permits");
        assertThatThrownBy(() -> client.semaphore(name(), -2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> client.semaphore(name(), 1001)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @Tag("zero-wait")
    @DisplayName("N members of separate clients starting together with a zero wait on N free permits are all granted,"
            + " each on its own slot, each within timeout")
    void membersStartingTogetherWithZeroWaitAreAllGranted() throws Exception {
        int permits = 3;
        String name = name();
        // The contract's own options, not the library's longer default lease: the server is shared with the
        // other groups, and a server may remember the longest TTL it ever granted (the example backend's
        // restarted server grants nothing for that long), so a longer lease here would slow later groups.
        // A backend whose zero wait depends on the lease's cadence tests the default lease in its own module
        // (Kafka: KafkaSemaphoreTest#zeroWaitBesideAHolderWithTheDefaultOptions).
        List<DistributedSemaphore> semaphores = new ArrayList<>();
        for (int i = 0; i < permits; i++) {
            semaphores.add(track(contract().newClient()).semaphore(name, permits));
        }
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Optional<SemaphoreLease>>> results = new ArrayList<>();
        List<Duration> took = new ArrayList<>();
        for (DistributedSemaphore semaphore : semaphores) {
            results.add(executor().submit(() -> {
                start.await();
                long began = System.nanoTime();
                Optional<SemaphoreLease> lease = semaphore.tryAcquire(Duration.ZERO);
                lease.ifPresent(this::track);
                synchronized (took) {
                    took.add(Duration.ofNanos(System.nanoTime() - began));
                }
                return lease;
            }));
        }
        start.countDown();

        Set<Integer> slots = new HashSet<>();
        for (int i = 0; i < permits; i++) {
            Optional<SemaphoreLease> lease = await(results.get(i), tryBound(Duration.ZERO), "tryAcquire(0) of member " + i);
            assertThat(lease).as("member %d of %d starting together with a zero wait on %d free permits", i, permits, permits)
                    .isPresent();
            slots.add(lease.get().slot());
        }
        assertThat(slots).as("slots of the members").hasSize(permits);
        assertThat(took).as("time of each tryAcquire(0)").allSatisfy(d -> assertThat(d).isLessThanOrEqualTo(tryBound(Duration.ZERO)));
    }

    @Test
    @DisplayName("no reentrancy: one thread's second tryAcquire takes another permit, and with none left it is empty")
    void everyAcquireTakesAnotherPermit() throws Exception {
        DistributedSemaphore semaphore = client().semaphore(name(), 2);
        SemaphoreLease one = hold(semaphore);
        SemaphoreLease two = hold(semaphore);

        assertThat(one.slot()).isNotEqualTo(two.slot());
        assertThat(semaphore.tryAcquire()).as("a third permit of two, from the same thread").isEmpty();
        one.close();
        assertThat(two.isValid()).as("the second permit after the first closed").isTrue();
        Optional<SemaphoreLease> again = semaphore.tryAcquire(tryBound(Duration.ZERO));
        assertThat(again).as("a permit after one was released").isPresent();
        track(again.get());
        assertThat(again.get().slot()).isEqualTo(one.slot());
    }

    @Test
    @DisplayName("a lease closed from another thread frees its permit; closing twice is harmless and frees nothing else")
    void closeFromAnyThreadOnce() throws Exception {
        String name = name();
        DistributedSemaphore semaphore = client().semaphore(name, 2);
        SemaphoreLease first = hold(semaphore);
        SemaphoreLease second = hold(semaphore);

        await(executor().submit(() -> {
            first.close();
            return null;
        }), tryBound(Duration.ZERO), "close from another thread");
        assertThat(first.isValid()).isFalse();
        assertThatThrownBy(first::ensureValid).isInstanceOf(IllegalStateException.class);
        DistributedSemaphore other = client().semaphore(name, 2);
        SemaphoreLease third = track(other.tryAcquire(tryBound(Duration.ZERO)).orElseThrow(
                () -> new AssertionError("no permit after one was closed from another thread")));
        first.close();

        assertThat(second.isValid()).as("the other holder after a second close").isTrue();
        assertThat(third.isValid()).as("the new holder after a second close").isTrue();
        assertThat(other.tryAcquire()).as("a permit beyond two after the second close").isEmpty();
    }
}
