package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockException;
import io.latchkey.testkit.history.FencedResource;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rules 1, 7 and 8 across a restart of the server: no two valid holders at any instant, tokens still
 * increasing, and the lock usable again within the failover bound.
 */
abstract class ServerRestartTests extends ContractGroup {

    static final int CONTENDERS = 2;

    @Test
    @DisplayName("server restart while a lock is held and contenders wait: never two valid holders,"
            + " and the lock is usable afterwards")
    void restartWhileHeldAndContended() throws Exception {
        String name = name();
        History history = new History();
        FencedResource resource = new FencedResource(name);
        Held first = hold(client().lock(name), history, "holder");
        Lease holder = first.lease();
        History.Grant held = first.grant();
        resource.write(held);

        CountDownLatch waiting = new CountDownLatch(CONTENDERS);
        List<Future<Boolean>> contenders = new ArrayList<>();
        Duration contenderWait = patientWait().multipliedBy(2);
        for (int i = 0; i < CONTENDERS; i++) {
            DistributedLock lock = client().lock(name);
            String actor = "contender" + i;
            contenders.add(executor().submit(() -> {
                waiting.countDown();
                return holdBriefly(lock, actor, contenderWait, history, resource);
            }));
        }
        waiting.await();
        // gives the contenders' requests time to reach the server before it goes down
        Thread.sleep(options().safetyMargin().toMillis());

        AtomicBoolean stop = new AtomicBoolean();
        Future<?> watcher = executor().submit(() -> {
            while (!stop.get() && held.check(holder::isValid)) {
                Thread.sleep(1); // the pace of observation
            }
            return null;
        });
        long restartAt = History.now();
        history.fault("server restart", name, restartAt);
        contract().server().restart();

        // the holder keeps its lease (if the backend kept it) for a full lease after the restart
        Thread.sleep(lease().toMillis());
        stop.set(true);
        await(watcher, tryBound(Duration.ZERO), "the validity watcher");
        long releaseAt = History.now();
        try {
            holder.close();
        } catch (LockException e) {
            // the release may not reach a server that forgot the lock; it expires on its own
        }
        held.released(History.now());

        for (Future<Boolean> c : contenders) {
            assertThat(await(c, tryBound(contenderWait), "a contender")).as("a contender got the lock").isTrue();
        }
        DistributedLock after = client().lock(name);
        long requested = History.now();
        Optional<Lease> last = after.tryLock(failoverBound());
        assertThat(last).as("the lock after the restart and the holders' releases").isPresent();
        track(last.get());
        History.Grant lastGrant = history.acquired("after-restart", name, last.get().fencingToken(), requested,
                History.now());
        lastGrant.check(last.get()::isValid);
        assertThat(resource.write(lastGrant)).as("a write after the restart").isTrue();

        HistoryChecker.assertConsistent(history);
        HistoryChecker.assertAvailableWithin(history, name, releaseAt, failoverBound());
    }

    private Boolean holdBriefly(DistributedLock lock, String actor, Duration wait, History history,
            FencedResource resource) throws InterruptedException {
        long requested = History.now();
        Optional<Lease> got;
        try {
            got = lock.tryLock(wait);
        } catch (LockException e) {
            // the server was down during the attempt: a contender tries again, as an application would
            requested = History.now();
            got = lock.tryLock(wait);
        }
        if (got.isEmpty()) {
            return false;
        }
        try (Lease lease = got.get()) {
            history.writeOnce(actor, lease, requested, resource);
        } catch (LockException e) {
            // the close may fail while the server is unreachable; the lock then expires on its own
        }
        return true;
    }
}
