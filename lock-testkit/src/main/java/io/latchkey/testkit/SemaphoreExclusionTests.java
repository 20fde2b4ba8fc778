package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedSemaphore;
import io.latchkey.LockClient;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.history.FencedPermits;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * At most {@code N} valid leases of one semaphore at any instant, across threads, clients and
 * processes, each on its own slot; a contender beyond {@code N} waits and gets the slot a holder
 * releases, as soon as it is released.
 */
abstract class SemaphoreExclusionTests extends SemaphoreGroup {

    static final int PERMITS = 3;
    static final int CLIENTS = 3;
    static final int THREADS_PER_CLIENT = 3;
    static final int ROUNDS = 4;

    @Test
    @DisplayName("nine threads of three clients and a child JVM contend for 3 permits: never more than 3 valid leases,"
            + " never two on one slot, tokens growing per slot, the resource fenced per slot")
    void neverMoreThanNValidLeases() throws Exception {
        String name = name();
        History history = new History();
        FencedPermits resource = new FencedPermits(name);
        ChildHolder child = childHolder();
        List<Future<?>> contenders = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger writes = new AtomicInteger();
        for (int c = 0; c < CLIENTS; c++) {
            LockClient client = client();
            for (int t = 0; t < THREADS_PER_CLIENT; t++) {
                DistributedSemaphore semaphore = client.semaphore(name, PERMITS);
                String actor = "client" + c + "-thread" + t;
                contenders.add(executor().submit(() -> {
                    start.await();
                    for (int round = 0; round < ROUNDS; round++) {
                        long requested = History.now();
                        SemaphoreLease lease = semaphore.tryAcquire(patientWait()).orElseThrow(() -> new AssertionError(
                                actor + " got no permit of '" + name + "' within " + patientWait()));
                        History.Grant grant = history.acquiredPermit(actor, name, lease.slot(), lease.fencingToken(),
                                requested, History.now());
                        if (grant.check(lease::isValid)) {
                            writes.incrementAndGet();
                            resource.write(grant);
                        }
                        Thread.sleep(5); // holds it a moment, so that holders overlap
                        grant.check(lease::isValid);
                        lease.close();
                        grant.released(History.now());
                    }
                    return null;
                }));
            }
        }
        start.countDown();
        for (int round = 0; round < ROUNDS; round++) {
            History.Grant grant = childHolds(child, name, PERMITS, history);
            ChildHolder.Reply check = child.request("check-then-write", tryBound(Duration.ZERO));
            assertThat(child.next(tryBound(Duration.ZERO)).kind()).isEqualTo("write");
            if (check.kind().equals("valid")) {
                grant.valid(check.sentAt());
                writes.incrementAndGet();
                resource.write(grant);
            }
            assertThat(child.request("release", tryBound(Duration.ZERO)).kind()).isEqualTo("released");
            grant.released(History.now());
        }
        for (Future<?> f : contenders) {
            await(f, patientWait().multipliedBy(ROUNDS), "a contender");
        }
        HistoryChecker.assertPermitsRespected(history, PERMITS);
        assertThat(resource.acceptedWrites()).as("writes of valid holders the per-slot fenced resource accepted")
                .isEqualTo(writes.get()).isPositive();
    }

    @Test
    @DisplayName("N holders of two clients and a child JVM hold slots 0..N-1; the N+1-th waits and gets the released"
            + " slot, with a higher token, within the wake-up bound of the release")
    void nPlusOneWaitsAndGetsTheReleasedSlot() throws Exception {
        String name = name();
        History history = new History();
        LockClient a = client();
        Held first = hold(a.semaphore(name, PERMITS), history, "client-a");
        Held second = hold(a.semaphore(name, PERMITS), history, "client-a");
        ChildHolder child = childHolder();
        History.Grant childGrant = childHolds(child, name, PERMITS, history);
        Set<Integer> slots = new HashSet<>(List.of(first.lease().slot(), second.lease().slot(), childGrant.slot()));
        assertThat(slots).as("the slots of %d holders", PERMITS).containsExactlyInAnyOrder(0, 1, 2);

        DistributedSemaphore semaphore = client().semaphore(name, PERMITS);
        assertThat(semaphore.tryAcquire()).as("a permit beyond %d", PERMITS).isEmpty();
        CountDownLatch waiting = new CountDownLatch(1);
        Future<Held> next = executor().submit(() -> {
            waiting.countDown();
            long requested = History.now();
            Optional<SemaphoreLease> lease = semaphore.tryAcquire(patientWait());
            long grantedAt = History.now();
            SemaphoreLease l = track(lease.orElseThrow(() -> new AssertionError("the waiter got no permit")));
            History.Grant g = history.acquiredPermit("waiter", name, l.slot(), l.fencingToken(), requested, grantedAt);
            g.check(l::isValid);
            return new Held(l, g);
        });
        waiting.await();

        ChildHolder.Reply released = child.request("release", tryBound(Duration.ZERO));
        assertThat(released.kind()).isEqualTo("released");
        childGrant.released(released.receivedAt());
        Held waiter = await(next, tryBound(patientWait()), "the waiter");

        assertThat(waiter.lease().slot()).as("the waiter's slot").isEqualTo(childGrant.slot());
        assertThat(waiter.lease().fencingToken()).as("the waiter's token against the released slot's")
                .isGreaterThan(childGrant.token());
        // the server freed the slot between the send of the release and its answer
        Duration releaseRoundTrip = Duration.ofNanos(released.receivedAt() - released.sentAt());
        HistoryChecker.assertAvailableWithin(history, History.permitKey(name, childGrant.slot()), released.sentAt(),
                wakeUpBound().plus(releaseRoundTrip));
        assertThat(first.lease().isValid() && second.lease().isValid()).as("the other holders").isTrue();
        HistoryChecker.assertPermitsRespected(history, PERMITS);
    }
}
