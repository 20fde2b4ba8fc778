package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Future;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rule 5: when a holder dies without closing (kill -9), a contender that waits gets the lock within
 * {@code lease} plus the waiter's wake-up ({@link ContractGroup#WAKE_UP_BUDGET}) plus the kit's slack
 * for scheduling; see {@link ContractGroup#crashBound()} for why there is no {@code timeout} in it.
 */
abstract class CrashReleaseTests extends ContractGroup {

    @Test
    @DisplayName("kill -9 of a holder in a child JVM: a waiting contender gets the lock within lease + wake-up (250 ms) + slack")
    void killedHolderReleasesWithinLease() throws Exception {
        String name = name();
        History history = new History();
        ChildHolder child = childHolder();
        ChildHolder.Reply got = child.acquire(name, patientWait(), tryBound(patientWait()));
        assertThat(got.kind()).as("the child's answer to acquire: " + got).isEqualTo("acquired");
        long childToken = Long.parseLong(got.argument());
        history.acquired("child-" + child.pid(), name, childToken, got.sentAt(), got.receivedAt());

        DistributedLock lock = client().lock(name);
        assertThat(lock.tryLock()).as("the lock while the child holds it").isEmpty();
        Future<Optional<Lease>> contender = started(() -> {
            long requested = History.now();
            Optional<Lease> lease = lock.tryLock(patientWait());
            lease.ifPresent(l -> history.acquired("contender", name, l.fencingToken(), requested, History.now())
                    .check(l::isValid));
            return lease;
        });

        long killedAt = killHolder(child, history, name);

        Optional<Lease> lease = await(contender, tryBound(patientWait()), "the contender");
        assertThat(lease).as("the contender's lease after the holder was killed").isPresent();
        track(lease.get());
        assertThat(lease.get().fencingToken()).isGreaterThan(childToken);
        HistoryChecker.assertAvailableWithin(history, name, killedAt, crashBound());
        HistoryChecker.assertConsistent(history);
    }

    @Test
    @DisplayName("a client closed while holding the lock releases it at once, not after the lease")
    void closedClientReleasesAtOnce() throws Exception {
        String name = name();
        io.latchkey.LockClient holderClient = client();
        Lease held = hold(holderClient.lock(name));

        holderClient.close();

        assertThat(held.isValid()).isFalse();
        Optional<Lease> next = client().lock(name).tryLock(tryBound(Duration.ZERO));
        assertThat(next).as("another client right after the holder's client closed").isPresent();
        track(next.get());
    }
}
