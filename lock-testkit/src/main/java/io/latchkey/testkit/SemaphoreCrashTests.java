package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedSemaphore;
import io.latchkey.LockClient;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Future;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rule 5 for semaphores: the permit of a holder killed with {@code kill -9} is free for a waiting
 * contender within {@code lease} plus the wake-up budget plus slack ({@link SemaphoreGroup#crashBound()}).
 */
abstract class SemaphoreCrashTests extends SemaphoreGroup {

    @Test
    @DisplayName("kill -9 of a holder in a child JVM: a waiting contender gets its slot within lease + wake-up (250 ms)"
            + " + slack, while the other holder keeps its own")
    void killedHolderFreesItsPermitWithinLease() throws Exception {
        String name = name();
        History history = new History();
        Held parent = hold(client().semaphore(name, 2), history, "parent");
        ChildHolder child = childHolder();
        History.Grant childGrant = childHolds(child, name, 2, history);
        assertThat(childGrant.slot()).isNotEqualTo(parent.lease().slot());

        DistributedSemaphore semaphore = client().semaphore(name, 2);
        assertThat(semaphore.tryAcquire()).as("a third permit of two while the child lives").isEmpty();
        Future<Optional<SemaphoreLease>> contender = started(() -> {
            long requested = History.now();
            Optional<SemaphoreLease> lease = semaphore.tryAcquire(patientWait());
            lease.ifPresent(l -> history.acquiredPermit("contender", name, l.slot(), l.fencingToken(), requested,
                    History.now()).check(l::isValid));
            return lease;
        });

        long killedAt = killHolder(child, history, name);

        Optional<SemaphoreLease> lease = await(contender, tryBound(patientWait()), "the contender");
        assertThat(lease).as("the contender's permit after the holder was killed").isPresent();
        track(lease.get());
        assertThat(lease.get().slot()).isEqualTo(childGrant.slot());
        assertThat(lease.get().fencingToken()).isGreaterThan(childGrant.token());
        parent.grant().check(parent.lease()::isValid);
        assertThat(parent.lease().isValid()).as("the parent's permit").isTrue();
        HistoryChecker.assertAvailableWithin(history, History.permitKey(name, childGrant.slot()), killedAt, crashBound());
        HistoryChecker.assertPermitsRespected(history, 2);
    }

    @Test
    @DisplayName("a client closed while holding permits frees them at once, not after the lease")
    void closedClientFreesItsPermitsAtOnce() throws Exception {
        String name = name();
        LockClient holderClient = client();
        SemaphoreLease one = hold(holderClient.semaphore(name, 2));
        SemaphoreLease two = hold(holderClient.semaphore(name, 2));

        holderClient.close();

        assertThat(one.isValid() || two.isValid()).as("the closed client's leases").isFalse();
        DistributedSemaphore other = client().semaphore(name, 2);
        for (int i = 0; i < 2; i++) {
            Optional<SemaphoreLease> next = other.tryAcquire(tryBound(Duration.ZERO));
            assertThat(next).as("permit %d for another client right after the holder's client closed", i + 1).isPresent();
            track(next.get());
        }
    }
}
