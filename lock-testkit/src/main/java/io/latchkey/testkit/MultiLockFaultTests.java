package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.LockLostException;
import io.latchkey.MultiLease;
import io.latchkey.MultiLock;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The lock's faults on a multi-lock: a holder killed with kill -9 frees every name within the lock's
 * crash bound (and one acquire round trip for each further name), and a holder cut off the network
 * finds its whole multi-lease invalid, with {@code lost()} complete, no later than any of its names is
 * granted to someone else.
 */
abstract class MultiLockFaultTests extends MultiLockGroup {

    @Test
    @DisplayName("kill -9 of a holder in a child JVM: a waiting multi-lock gets every name within lease + wake-up + a round trip per further name")
    void killedHolderFreesEveryName() throws Exception {
        List<String> names = List.of(name("a"), name("b"));
        History history = new History();
        ChildHolder child = childHolder();
        List<History.Grant> childGrants = childHolds(child, names, history);

        MultiLock both = client().multiLock(names);
        assertThat(both.tryLock()).as("the multi-lock while the child holds it").isEmpty();
        Future<Optional<MultiLease>> contender = started(() -> {
            long requested = History.now();
            Optional<MultiLease> lease = both.tryLock(patientWait());
            lease.ifPresent(l -> record(history, "contender", l, requested, History.now()));
            return lease;
        });

        long killedAt = killHolder(child, history, names.get(0));

        Optional<MultiLease> lease = await(contender, tryBound(patientWait()).multipliedBy(names.size()), "the contender");
        assertThat(lease).as("the contender's multi-lease after the holder was killed").isPresent();
        track(lease.get());
        for (int i = 0; i < names.size(); i++) {
            assertThat(lease.get().fencingToken(names.get(i))).as("the contender's token of %s", names.get(i))
                    .isGreaterThan(childGrants.get(i).token());
            HistoryChecker.assertAvailableWithin(history, names.get(i), killedAt,
                    crashBound().plus(tryBound(Duration.ZERO).multipliedBy(i)));
        }
        HistoryChecker.assertConsistent(history);
    }

    @Test
    @DisplayName("network cut of a holder: its multi-lease is invalid and lost() complete no later than another's grant of its names")
    void cutHolderLosesTheWhole() throws Exception {
        List<String> names = List.of(name("a"), name("b"));
        History history = new History();
        CuttableClient cut = cuttableClient();
        long requested = History.now();
        MultiLease held = hold(cut.client().multiLock(names));
        List<History.Grant> heldGrants = record(history, "cut-client", held, requested, History.now());
        AtomicLong lostAt = new AtomicLong();
        held.lost().thenRun(() -> lostAt.set(History.now()));

        MultiLock both = client().multiLock(names);
        Future<List<History.Grant>> next = started(() -> {
            long asked = History.now();
            MultiLease lease = track(both.tryLock(patientWait()).orElseThrow(
                    () -> new AssertionError("the contender was not granted " + names + " within " + patientWait())));
            return record(history, "contender", lease, asked, History.now());
        });

        long cutAt = cutHolder(cut, history, names.get(0));

        List<History.Grant> granted = await(next, tryBound(patientWait()).multipliedBy(names.size()), "the contender");
        boolean stillValid = held.isValid();
        heldGrants.forEach(g -> g.check(() -> stillValid));

        assertThat(stillValid).as("the cut holder's multi-lease right after the contender's grant").isFalse();
        assertThat(lostAt.get()).as("when the cut holder's lost() completed (0: not yet)").isNotZero();
        assertThat(lostAt.get() - grantedAt(history, granted.get(0)))
                .as("lost() completion relative to the contender's grant (ns)").isLessThanOrEqualTo(0);
        assertThatThrownBy(held::ensureValid).isInstanceOf(LockLostException.class);
        for (int i = 0; i < names.size(); i++) {
            HistoryChecker.assertAvailableWithin(history, names.get(i), cutAt,
                    failoverBound().plus(tryBound(Duration.ZERO).multipliedBy(i)));
        }
        HistoryChecker.assertConsistent(history);
        held.close(); // harmless while cut: the lost names were released already, the rest expire
        cut.restore();
    }
}
