package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedLock;
import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockState;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * An operator's tools on the backend: {@link LockClient#list} reads exactly the held names under a
 * prefix, page by page, and {@link DistributedLock#forceRelease()} ends another client's grant: its
 * holder learns it as a loss at its next check of the grant (bounded here by {@code lease + slack}), a
 * waiter is granted without waiting for an expiry, and its token is higher than the ended one.
 */
@Tag("inspection") // run with the inspection group: -Dgroups=inspection
abstract class AdminTests extends ContractGroup {

    @Test
    @DisplayName("list reads exactly the held names under a prefix, each once even with a waiter queued, in order and"
            + " page by page; a released name and a name outside the prefix are not listed, nor anything after the last"
            + " release")
    void listSeesExactlyTheHeldNames() throws Exception {
        String prefix = name() + "/";
        LockClient holder = client();
        Lease a = hold(holder.lock(prefix + "a"));
        Lease c = hold(holder.lock(prefix + "c"));
        hold(holder.lock(prefix + "b")).close();
        hold(holder.lock(prefix.substring(0, prefix.length() - 1) + "-outside"));
        LockClient waiterClient = client();
        Future<Optional<Lease>> waiter = started(() -> waiterClient.lock(prefix + "c").tryLock(patientWait()));
        Thread.sleep(timeout().toMillis()); // the waiter queues meanwhile, where the backend keeps a queue

        LockClient seen = client();
        assertThat(seen.list(prefix)).as("every held name under the prefix").containsExactly(prefix + "a", prefix + "c");
        assertThat(seen.list(prefix, null, 1)).as("the first page of one").containsExactly(prefix + "a");
        assertThat(seen.list(prefix, prefix + "a", 1)).as("the page after a").containsExactly(prefix + "c");
        assertThat(seen.list(prefix, prefix + "c", 1)).as("the page after c, the last").isEmpty();

        a.close();
        c.close();
        track(await(waiter, tryBound(patientWait()), "the waiter").orElseThrow()).close();
        assertThat(seen.list(prefix)).as("after the last release").isEmpty();
    }

    @Test
    @DisplayName("force release ends another client's grant: it returns that grant, a waiter is granted with a higher"
            + " token, and the holder's lease is lost within lease + slack, invalid from then on")
    void forceReleaseEndsTheGrantAndTheHolderLearnsIt() throws Exception {
        String name = name();
        Lease lease = hold(clientOwnedBy("force-released-holder").lock(name));
        LockClient waiterClient = client();
        Future<Optional<Lease>> waiter = started(() -> waiterClient.lock(name).tryLock(patientWait()));
        Thread.sleep(timeout().toMillis()); // the waiter queues meanwhile, where the backend keeps a queue

        long releasedAt = System.nanoTime();
        LockState ended = client().lock(name).forceRelease();
        assertThat(ended.holder().map(Holder::owner)).as("the holder of the ended grant").hasValue("force-released-holder");
        assertThat(ended.token()).as("the ended grant's token").hasValue(lease.fencingToken());

        Lease next = track(await(waiter, failoverBound(), "the waiter, after the force release").orElseThrow());
        assertThat(next.fencingToken()).as("the next grant's token").isGreaterThan(lease.fencingToken());
        Exception why = lease.lost().toCompletableFuture()
                .get(lease().plus(slack()).toNanos() - (System.nanoTime() - releasedAt), TimeUnit.NANOSECONDS);
        assertThat(why).as("the holder's loss").hasMessageContaining(name);
        assertThat(lease.isValid()).as("the force-released lease").isFalse();
        assertThat(client().lock(name).inspect().holder().map(Holder::owner)).as("the holder now")
                .hasValue(options().owner());
    }

    @Test
    @DisplayName("force release of a name nobody holds says it was free and creates nothing: the name is still free and"
            + " not listed")
    void forceReleaseOfAFreeNameIsANoOp() throws Exception {
        String name = name();
        LockClient admin = client();
        assertThat(admin.lock(name).forceRelease()).isEqualTo(LockState.free(name));
        assertThat(admin.lock(name).inspect()).isEqualTo(LockState.free(name));
        assertThat(admin.list(name)).isEqualTo(List.of());
    }

    @Test
    @DisplayName("asLock(): unlock of a lease force-released while held frees the thread's hold and says the lease"
            + " was lost with an IllegalMonitorStateException")
    void asLockUnlockOfALostLeaseSaysSo() throws Exception {
        String name = name();
        DistributedLock distributed = client().lock(name);
        Lock view = distributed.asLock();
        view.lock();
        long releasedAt = System.nanoTime();
        client().lock(name).forceRelease();
        long bound = lease().plus(slack()).toNanos();
        while (distributed.isHeldByCurrentThread() && System.nanoTime() - releasedAt < bound) {
            Thread.sleep(20);
        }
        assertThat(distributed.isHeldByCurrentThread()).as("the view's lease, a lease + slack after the force release")
                .isFalse();
        assertThatThrownBy(view::unlock).isInstanceOf(IllegalMonitorStateException.class).hasMessageContaining(name)
                .hasMessageContaining("lost or had expired before unlock()");
        assertThat(distributed.holdCount()).as("the thread's leases after the unlock").isZero();
    }
}
