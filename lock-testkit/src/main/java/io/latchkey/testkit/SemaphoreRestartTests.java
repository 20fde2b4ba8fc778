package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedSemaphore;
import io.latchkey.LockException;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.history.FencedPermits;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rules 1, 7 and 8 for semaphores across a restart of the server: never more than {@code N} valid
 * leases, one per slot, tokens still growing per slot, and the semaphore usable again afterwards.
 */
abstract class SemaphoreRestartTests extends SemaphoreGroup {

    static final int PERMITS = 2;
    static final int CONTENDERS = 2;

    @Test
    @DisplayName("server restart while every permit is held and contenders wait: never more than N valid leases,"
            + " and the semaphore is usable afterwards")
    void restartWhileFullAndContended() throws Exception {
        String name = name();
        History history = new History();
        FencedPermits resource = new FencedPermits(name);
        List<Held> holders = new ArrayList<>();
        for (int i = 0; i < PERMITS; i++) {
            Held h = hold(client().semaphore(name, PERMITS), history, "holder" + i);
            resource.write(h.grant());
            holders.add(h);
        }

        List<Future<Boolean>> contenders = new ArrayList<>();
        Duration contenderWait = ACROSS_RESTART; // the grant is bounded from the release below
        for (int i = 0; i < CONTENDERS; i++) {
            DistributedSemaphore semaphore = client().semaphore(name, PERMITS);
            String actor = "contender" + i;
            contenders.add(started(() -> holdBriefly(semaphore, actor, contenderWait, history, resource)));
        }
        // gives the contenders' requests time to reach the server before it goes down
        Thread.sleep(options().safetyMargin().toMillis());

        AtomicBoolean stop = new AtomicBoolean();
        List<Future<?>> watchers = new ArrayList<>();
        for (Held h : holders) {
            watchers.add(watchValidity(h.grant(), h.lease()::isValid, stop));
        }
        restartServer(history, name);

        // the holders keep their permits (if the backend kept them) for a full lease after the restart
        Thread.sleep(lease().toMillis());
        stop.set(true);
        for (Future<?> w : watchers) {
            await(w, tryBound(Duration.ZERO), "a validity watcher");
        }
        long releaseAt = History.now();
        for (Held h : holders) {
            try {
                h.lease().close();
            } catch (LockException e) {
                // the release may not reach a server that forgot the permit; it expires on its own
            }
            h.grant().released(History.now());
        }

        // each contender within a failover bound of the release before it (a release that did not reach
        // the server is its expiry), and its own brief hold
        for (Future<Boolean> c : contenders) {
            assertThat(await(c, tryBound(failoverBound().multipliedBy(2)), "a contender"))
                    .as("a contender got a permit").isTrue();
        }
        long requested = History.now();
        Optional<SemaphoreLease> last = client().semaphore(name, PERMITS).tryAcquire(failoverBound());
        assertThat(last).as("a permit after the restart and the holders' releases").isPresent();
        track(last.get());
        History.Grant lastGrant = history.acquiredPermit("after-restart", name, last.get().slot(),
                last.get().fencingToken(), requested, History.now());
        lastGrant.check(last.get()::isValid);
        assertThat(resource.write(lastGrant)).as("a write after the restart").isTrue();

        HistoryChecker.assertPermitsRespected(history, PERMITS);
        HistoryChecker.assertPermitAvailableWithin(history, name, releaseAt, failoverBound());
    }

    private Boolean holdBriefly(DistributedSemaphore semaphore, String actor, Duration wait, History history,
            FencedPermits resource) throws InterruptedException {
        Attempt<SemaphoreLease> attempt = acquireAcrossRestart(() -> semaphore.tryAcquire(wait));
        if (attempt.got().isEmpty()) {
            return false;
        }
        SemaphoreLease lease = attempt.got().get();
        History.Grant grant = history.acquiredPermit(actor, semaphore.name(), lease.slot(), lease.fencingToken(),
                attempt.requestedAt(), History.now());
        if (grant.check(lease::isValid)) {
            resource.write(grant);
            grant.check(lease::isValid);
        }
        try {
            lease.close();
            grant.released(History.now());
        } catch (LockException e) {
            // the close may fail while the server is unreachable; the permit then expires on its own
        }
        return true;
    }
}
