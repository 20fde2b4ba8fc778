package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockState;
import io.latchkey.testkit.history.FencedResource;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Rules 1, 7 and 8 across a restart of the server: no two valid holders at any instant, tokens still
 * increasing, and the lock usable again within the failover bound; and after a
 * restart the lock is granted again within {@code lease} plus the server's own start time, inspection
 * reads the grant the server kept (or none) and then the new one, and waiters are still woken by releases.
 */
@Tag("server-restart") // a backend's author runs this group alone with -Dgroups=server-restart
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

        List<Future<Boolean>> contenders = new ArrayList<>();
        Duration contenderWait = ACROSS_RESTART; // the grant is bounded from the release below
        for (int i = 0; i < CONTENDERS; i++) {
            DistributedLock lock = client().lock(name);
            String actor = "contender" + i;
            contenders.add(started(() -> holdBriefly(lock, actor, contenderWait, history, resource)));
        }
        // gives the contenders' requests time to reach the server before it goes down
        Thread.sleep(options().safetyMargin().toMillis());

        AtomicBoolean stop = new AtomicBoolean();
        Future<?> watcher = watchValidity(held, holder::isValid, stop);
        restartServer(history, name);

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

        // each contender within a failover bound of the release before it (a release that did not reach
        // the server is its expiry), and its own brief hold
        for (Future<Boolean> c : contenders) {
            assertThat(await(c, tryBound(failoverBound().multipliedBy(2)), "a contender"))
                    .as("a contender got the lock").isTrue();
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

    @Test
    @DisplayName("after a server restart the lock is granted again within lease + the server's start time"
            + " + wake-up + slack, without a first failed acquire; inspect, right after the restart, shows the holder's"
            + " grant with its token or none, and the next grant once made")
    void grantedAgainWithinLeasePlusStartTime() throws Exception {
        String name = name();
        LockClient holderClient = clientOwnedBy("restart-holder");
        LockClient next = clientOwnedBy("restart-next");
        // both clients know the lock before the restart (its keys, nodes, topic and metadata)
        track(next.lock(name).tryLock(patientWait()).orElseThrow()).close();
        Lease holder = hold(holderClient.lock(name));

        long restartAt = System.nanoTime();
        contract().server().restart();
        long servingAt = System.nanoTime();
        // no retry either: the grant the backend kept through the restart, as it was, or none (a grant the server
        // forgot, or one it ended with the holder's session); never another holder or another token
        LockState kept = next.lock(name).inspect();
        if (kept.isHeld()) {
            assertThat(kept.holder().map(Holder::owner)).as("the holder after the restart: %s", kept)
                    .hasValue("restart-holder");
            assertThat(kept.token()).as("its token after the restart: %s", kept).hasValue(holder.fencingToken());
        }
        try {
            holder.close();
        } catch (LockException e) {
            // the release did not reach the server: the lock then ends with the holder's client, or expires
            holderClient.close();
        }
        long releasedAt = System.nanoTime();

        // no retry: an acquire on a server that serves again must not fail first on stale state
        Optional<Lease> got = next.lock(name).tryLock(patientWait());
        long grantedAt = System.nanoTime();

        assertThat(got).as("the lock after the restart").isPresent();
        track(got.get());
        assertThat(got.get().isValid()).isTrue();
        LockState granted = next.lock(name).inspect();
        assertThat(granted.holder().map(Holder::owner)).as("the grant after the restart: %s", granted)
                .hasValue("restart-next");
        assertThat(granted.token()).as("its token: %s", granted).hasValue(got.get().fencingToken());
        Duration bound = Duration.ofNanos(releasedAt - restartAt).plus(lease()).plus(WAKE_UP_BUDGET).plus(slack());
        assertThat(Duration.ofNanos(grantedAt - restartAt))
                .as("time from the restart to the next grant (the server took %s ms to serve again, the holder's"
                        + " release returned %s ms after the restart)", (servingAt - restartAt) / 1_000_000,
                        (releasedAt - restartAt) / 1_000_000)
                .isLessThanOrEqualTo(bound);
    }

    @Test
    @DisplayName("after a server restart a release wakes a waiter of another client that waited since before the"
            + " restart, within wake-up + slack, well before its wait ends")
    void releaseAfterRestartWakesWaiter() throws Exception {
        String name = name();
        Lease holder = hold(client().lock(name));
        // the waits span the restart, which is a rolling restart of six nodes on a cluster: bounded after it below
        Duration wait = ACROSS_RESTART;
        List<Future<long[]>> waiters = new ArrayList<>();
        for (int i = 0; i < CONTENDERS; i++) {
            DistributedLock lock = client().lock(name);
            waiters.add(started(() -> takeAndRelease(lock, wait)));
        }
        // gives the waiters' requests time to reach the server before it goes down
        Thread.sleep(options().safetyMargin().toMillis());

        long restartAt = System.nanoTime();
        contract().server().restart();
        long restarted = (System.nanoTime() - restartAt) / 1_000_000;
        try {
            holder.close();
        } catch (LockException e) {
            // a release that cannot reach the server: the lock expires and a waiter gets it that way
        }

        // each waiter within a failover bound of the release before it (a release that did not reach the
        // server is its expiry), and its own brief hold
        List<long[]> times = new ArrayList<>();
        for (Future<long[]> w : waiters) {
            times.add(await(w, tryBound(failoverBound().multipliedBy(2)),
                    "a waiter, after a restart that took " + restarted + " ms"));
        }
        times.sort((x, y) -> Long.compare(x[0], y[0]));
        long[] first = times.get(0);
        long[] second = times.get(1);
        // the first waiter's grant came after the restart; its release is a release after the restart
        assertThat(Duration.ofNanos(second[0] - first[1]))
                .as("time from the first waiter's release (after the restart) to the grant of the second,"
                        + " waiting since before the restart with a wait of %s", wait)
                .isLessThanOrEqualTo(wakeUpBound());
    }

    /** Takes the lock waiting {@code wait} and releases it at once: {grant time, release time}. */
    private static long[] takeAndRelease(DistributedLock lock, Duration wait) throws InterruptedException {
        Optional<Lease> got = acquireAcrossRestart(() -> lock.tryLock(wait)).got();
        long grantedAt = System.nanoTime();
        if (got.isEmpty()) {
            throw new AssertionError("a waiter of lock '" + lock.name() + "' was not granted it within " + wait);
        }
        try {
            got.get().close();
        } catch (LockException e) {
            throw new AssertionError("a waiter's release of lock '" + lock.name() + "' after the restart failed", e);
        }
        return new long[] {grantedAt, System.nanoTime()};
    }

    private Boolean holdBriefly(DistributedLock lock, String actor, Duration wait, History history,
            FencedResource resource) throws InterruptedException {
        Attempt<Lease> attempt = acquireAcrossRestart(() -> lock.tryLock(wait));
        if (attempt.got().isEmpty()) {
            return false;
        }
        try (Lease lease = attempt.got().get()) {
            history.writeOnce(actor, lease, attempt.requestedAt(), resource);
        } catch (LockException e) {
            // the close may fail while the server is unreachable; the lock then expires on its own
        }
        return true;
    }
}
