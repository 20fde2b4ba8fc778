package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.GrantTime;
import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockState;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.history.History;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Future;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Inspection ({@link DistributedLock#inspect()}): what another client reads of a lock's grant, from the
 * backend. Its holder is the identity the granting client wrote ({@link Holder}), its token the lease's
 * fencing token, since when it is held within the request and the grant (by the backend's clock or the
 * holder's), and its time left, where the backend tells it, within the lease; a waiter is not the
 * holder until granted; a killed holder's grant shows until the backend expires it; and inspecting a
 * name nobody holds leaves nothing in the backend.
 */
@Tag("inspection") // a backend's author runs this group alone with -Dgroups=inspection
abstract class InspectionTests extends ContractGroup {

    @Test
    @DisplayName("another client reads the holder's owner, thread, client start, token and grant time right after"
            + " the grant and a lease later, a time left within the lease, no waiter, then the same holder and one waiter"
            + " while a waiter queues, the waiter once granted with its own grant time, and free after the release")
    void holderAndTokenFromGrantToRelease() throws Exception {
        String name = name();
        DistributedLock seen = client().lock(name);
        assertThat(seen.inspect()).as("before any grant").isEqualTo(LockState.free(name));
        Instant before = Instant.now();
        LockClient holderClient = clientOwnedBy("inspected-holder");
        Lease lease = hold(holderClient.lock(name));
        Instant after = Instant.now();
        assertHeldBy(seen.inspect(), "inspected-holder", Thread.currentThread().getName(), lease.fencingToken());
        assertThat(seen.inspect().holder().orElseThrow().clientStarted()).as("when the holder's client started")
                .isBetween(before, after);
        GrantTime since = seen.inspect().since().orElseThrow(() -> new AssertionError("no grant time"));
        assertWithinClocks(since, before, after, "the grant of a request that did not wait");

        assertThat(seen.inspect().waiters()).as("waiters behind a grant nobody waits for").hasValue(0);

        Thread.sleep(lease().toMillis()); // a lease of renewals: the record stays the holder's
        assertHeldBy(seen.inspect(), "inspected-holder", Thread.currentThread().getName(), lease.fencingToken());
        assertThat(seen.inspect().since()).as("the grant time after a lease of renewals").hasValue(since);

        LockClient waiterClient = clientOwnedBy("inspected-waiter");
        Instant waiterRequested = Instant.now();
        Future<Optional<Lease>> waiter = started(() -> waiterClient.lock(name).tryLock(patientWait()));
        Thread.sleep(timeout().toMillis()); // the waiter queues meanwhile, where the backend keeps a queue
        assertThat(seen.inspect().holder().map(Holder::owner)).as("the holder while a waiter queues")
                .hasValue("inspected-holder");
        // a group's member joins in a rebalance of its own: the count may take the join's time to show
        Awaitility.await("one waiter counted").atMost(failoverBound()).pollInterval(Duration.ofMillis(50))
                .until(() -> seen.inspect().waiters().equals(OptionalInt.of(1)));
        Instant released = Instant.now();
        lease.close();
        Lease next = track(await(waiter, tryBound(patientWait()), "the waiter").orElseThrow());
        Instant nextGranted = Instant.now();
        LockState granted = seen.inspect();
        GrantTime nextSince = granted.since().orElseThrow(() -> new AssertionError("no grant time in " + granted));
        // a grant's own time comes after the release before it; a request's time, before it, after the request
        assertWithinClocks(nextSince, nextSince.source().grant() ? released : waiterRequested, nextGranted,
                "the grant of a request that queued");
        assertThat(granted.holder().map(Holder::owner)).as("the holder once the waiter was granted")
                .hasValue("inspected-waiter");
        assertThat(granted.token()).as("the waiter's token").hasValue(next.fencingToken());
        next.close();
        assertThat(seen.inspect().isHeld()).as("after the last release").isFalse();
    }

    @Test
    @DisplayName("kill -9 of a holder in a child JVM: its grant shows, with the child's owner and token, until the"
            + " backend expires it (or ends it with the connection), within lease + wake-up + slack; then the lock is free")
    void killedHoldersGrantShowsUntilItExpires() throws Exception {
        String name = name();
        ChildHolder child = childHolder();
        ChildHolder.Reply got = child.acquire(name, patientWait(), tryBound(patientWait()));
        assertThat(got.kind()).as("the child's answer to acquire: " + got).isEqualTo("acquired");
        long token = Long.parseLong(got.argument());
        DistributedLock seen = client().lock(name);
        assertThat(seen.inspect().holder().map(Holder::owner)).as("the child's default owner, <hostname>:<pid>")
                .hasValueSatisfying(owner -> assertThat(owner).endsWith(":" + child.pid()));

        long killedAt = killHolder(child, new History(), name);
        // a backend that ends a session with its connection (the memory example's server) frees it at once;
        // one that waits for the session's or the key's expiry shows the killed holder until then
        LockState stale = seen.inspect();
        if (stale.isHeld()) {
            assertThat(stale.holder().map(Holder::owner)).as("the killed holder's grant, before the backend expires it")
                    .hasValueSatisfying(owner -> assertThat(owner).endsWith(":" + child.pid()));
            assertThat(stale.token()).as("its token").hasValue(token);
        }
        Awaitility.await("the killed holder's grant expired").atMost(crashBound()).pollInterval(Duration.ofMillis(20))
                .until(() -> !seen.inspect().isHeld());
        assertThat(Duration.ofNanos(History.now() - killedAt)).as("from the kill to a free lock")
                .isLessThanOrEqualTo(crashBound());
    }

    @Test
    @DisplayName("inspecting a name nobody holds says free and leaves nothing in the backend: before its first grant,"
            + " and after its release nothing beyond what a released lock leaves")
    void aFreeNameLeavesNothing() throws Exception {
        String name = name();
        LockClient client = client();
        assertThat(client.lock(name).inspect()).isEqualTo(LockState.free(name));
        assertThat(client.lock(name).inspect()).as("a second look").isEqualTo(LockState.free(name));
        // the backend's check is of a lock that was used (a counter of tokens may stay): use it once, so that
        // whatever the looks before created would be found beside what a grant and its release leave
        hold(client.lock(name)).close();
        assertThat(client.lock(name).inspect()).as("after the release").isEqualTo(LockState.free(name));
        client.close();
        contract().assertNothingLeftInBackend(List.of(name));
    }

    /** The state names {@code owner} and {@code thread} as the holder, with {@code token} and a time left within the lease. */
    private void assertHeldBy(LockState state, String owner, String thread, long token) {
        Holder holder = state.holder().orElseThrow(() -> new AssertionError("no holder in " + state));
        assertThat(holder.owner()).as("the holder's owner in " + state).isEqualTo(owner);
        assertThat(holder.thread()).as("the thread that acquired, in " + state).isEqualTo(thread);
        assertThat(state.token()).as("the token in " + state).hasValue(token);
        state.expiresIn().ifPresent(left -> assertThat(left).as("the time left in " + state).isPositive()
                .isLessThanOrEqualTo(lease()));
    }
}
