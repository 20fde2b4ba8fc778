package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The fair-ordering capability: waiters from different clients are granted the lock in arrival order. */
abstract class FairOrderingTests extends ContractGroup {

    static final int WAITERS = 4;

    @Test
    @DisplayName("waiters from different clients are granted the lock in the order they arrived")
    void waitersAreGrantedInArrivalOrder() throws Exception {
        String name = name();
        History history = new History();
        Held first = hold(client().lock(name), history, "holder");
        Lease holder = first.lease();
        List<String> grantOrder = new CopyOnWriteArrayList<>();
        List<Future<Boolean>> waiters = new ArrayList<>();
        long waitingBefore = WaitingAcquisitions.count();
        for (int i = 0; i < WAITERS; i++) {
            DistributedLock lock = client().lock(name);
            String actor = "waiter" + i;
            waiters.add(executor().submit(() -> {
                long requested = History.now();
                Optional<Lease> got = lock.tryLock(patientWait().multipliedBy(WAITERS));
                if (got.isEmpty()) {
                    return false;
                }
                try (Lease lease = got.get()) {
                    History.Grant g = history.acquired(actor, name, lease.fencingToken(), requested, History.now());
                    grantOrder.add(actor);
                    g.check(lease::isValid);
                    lease.close();
                    g.released(History.now());
                }
                return true;
            }));
            // the next waiter starts only once this one waits in the backend: arrival order is start order
            WaitingAcquisitions.awaitAtLeast(waitingBefore + i + 1, tryBound(Duration.ZERO), actor);
        }

        holder.close();
        first.grant().released(History.now());
        for (Future<Boolean> w : waiters) {
            assertThat(await(w, tryBound(patientWait().multipliedBy(WAITERS)), "a waiter")).isTrue();
        }

        List<String> arrival = new ArrayList<>();
        for (int i = 0; i < WAITERS; i++) {
            arrival.add("waiter" + i);
        }
        assertThat(grantOrder).as("the order of grants").containsExactlyElementsOf(arrival);
        HistoryChecker.assertConsistent(history);
    }
}
