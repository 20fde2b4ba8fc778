package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@code tryLockAsync}: the same bounds as {@code tryLock}, a lease that belongs to no thread, and
 * cancellation that leaves nothing held.
 */
abstract class AsyncAcquisitionTests extends ContractGroup {

    @Test
    @DisplayName("tryLockAsync on a free lock completes with a lease that any thread may close")
    void asyncGrantsFreeLock() throws Exception {
        String name = name();
        CompletableFuture<Optional<Lease>> f = client().lock(name).tryLockAsync(patientWait());

        Optional<Lease> lease = await(f, tryBound(patientWait()), "tryLockAsync");

        assertThat(lease).isPresent();
        assertThat(lease.get().isValid()).isTrue();
        await(executor().submit(() -> {
            lease.get().close();
            return null;
        }), tryBound(Duration.ZERO), "close on another thread");
        Optional<Lease> next = client().lock(name).tryLock(tryBound(Duration.ZERO));
        assertThat(next).as("another client after the asynchronous lease closed").isPresent();
        track(next.get());
    }

    @Test
    @DisplayName("tryLockAsync on a held lock completes empty after the wait, within the bound")
    void asyncOnHeldLockCompletesEmpty() throws Exception {
        String name = name();
        hold(client().lock(name));
        Duration wait = slack();
        long start = System.nanoTime();

        Optional<Lease> lease = await(client().lock(name).tryLockAsync(wait), tryBound(wait), "tryLockAsync");

        assertThat(lease).isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(wait.minusMillis(1), tryBound(wait));
    }

    @Test
    @DisplayName("a lease from tryLockAsync is not reentrant: the thread holding the lock waits for it like anyone")
    void asyncLeaseIsNotNestedInTheCallersLease() throws Exception {
        DistributedLock lock = client().lock(name());
        hold(lock);

        Optional<Lease> lease = await(lock.tryLockAsync(Duration.ZERO), tryBound(Duration.ZERO), "tryLockAsync");

        assertThat(lease).isEmpty();
    }

    @Test
    @DisplayName("cancelling a waiting tryLockAsync leaves the lock free once its holder releases it")
    void cancelledAsyncLeavesNothingHeld() throws Exception {
        String name = name();
        Lease held = hold(client().lock(name));
        DistributedLock waiter = client().lock(name);
        CompletableFuture<Optional<Lease>> f = waiter.tryLockAsync(patientWait());
        // cancelled only once it waits in the backend: a cancel that beats the call proves nothing
        WaitingAcquisitions.awaitAtLeast(1, tryBound(Duration.ZERO), "the asynchronous waiter");

        assertThat(f.cancel(true)).isTrue();
        held.close();

        Optional<Lease> next = client().lock(name).tryLock(tryBound(Duration.ZERO));
        assertThat(next).as("a third client after the holder released and the waiter cancelled").isPresent();
        track(next.get());
        Optional<Lease> waiterAgain = waiter.tryLock(Duration.ZERO);
        assertThat(waiterAgain).as("the cancelled waiter's client while the third holds the lock").isEmpty();
    }
}
