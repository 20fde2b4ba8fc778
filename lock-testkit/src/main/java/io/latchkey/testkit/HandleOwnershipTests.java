package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Rule 4: a lease may be closed from any thread; close is idempotent and never frees someone else's lock. */
abstract class HandleOwnershipTests extends ContractGroup {

    @Test
    @DisplayName("a lease closed from another thread releases the lock")
    void closeFromAnotherThreadReleases() throws Exception {
        String name = name();
        DistributedLock lock = client().lock(name);
        Lease lease = hold(lock);

        await(executor().submit(() -> {
            lease.close();
            return null;
        }), tryBound(Duration.ZERO), "close on another thread");

        assertThat(lease.isValid()).isFalse();
        Optional<Lease> other = client().lock(name).tryLock(tryBound(Duration.ZERO));
        assertThat(other).as("another client after the close").isPresent();
        track(other.get());
    }

    @Test
    @DisplayName("after a close from another thread, the thread that acquired can acquire again")
    void acquiringThreadCanAcquireAgainAfterForeignClose() throws Exception {
        DistributedLock lock = client().lock(name());
        Lease first = hold(lock);
        await(executor().submit(() -> {
            first.close();
            return null;
        }), tryBound(Duration.ZERO), "close on another thread");

        Optional<Lease> again = lock.tryLock(tryBound(Duration.ZERO));

        assertThat(again).isPresent();
        track(again.get());
        assertThat(again.get().fencingToken()).isGreaterThan(first.fencingToken());
    }

    @Test
    @DisplayName("close is idempotent, and a second close never releases the next holder's lock")
    void closeIsIdempotentAndNeverReleasesSomeoneElsesLock() throws Exception {
        String name = name();
        Lease first = hold(client().lock(name));
        first.close();
        Lease second = hold(client().lock(name));

        first.close();
        Future<?> fromAnotherThread = executor().submit(first::close);
        await(fromAnotherThread, tryBound(Duration.ZERO), "close on another thread");

        assertThat(second.isValid()).isTrue();
        assertThat(client().lock(name).tryLock()).as("a third client while the second holds the lock").isEmpty();
    }

    @Test
    @DisplayName("a lease is not valid after close, and ensureValid says it is closed")
    void closedLeaseIsNotValid() throws Exception {
        Lease lease = hold(client().lock(name()));

        lease.close();

        assertThat(lease.isValid()).isFalse();
        assertThat(lease.remaining()).isEqualTo(Duration.ZERO);
        org.assertj.core.api.Assertions.assertThatThrownBy(lease::ensureValid).isInstanceOf(IllegalStateException.class);
        assertThat(lease.lost().toCompletableFuture()).as("lost() of a lease closed normally").isNotDone();
    }

    @Test
    @DisplayName("asLock(): lock and tryLock take the lock reentrantly on the calling thread, another client's tryLock"
            + " fails while it is held, unlock by another thread or once too often is an IllegalMonitorStateException,"
            + " the last unlock frees it, newCondition is refused")
    void asLockFollowsReentrantLock() throws Exception {
        String name = name();
        DistributedLock distributed = client().lock(name);
        Lock view = distributed.asLock();
        Lock other = client().lock(name).asLock();
        view.lock();
        assertThat(view.tryLock(patientWait().toMillis(), TimeUnit.MILLISECONDS)).as("reentrant").isTrue();
        assertThat(distributed.holdCount()).as("the thread's leases").isEqualTo(2);
        assertThat(other.tryLock()).as("another client's tryLock while it is held").isFalse();

        Future<?> foreign = started(() -> {
            view.unlock();
            return null;
        });
        assertThatThrownBy(() -> await(foreign, tryBound(Duration.ZERO), "an unlock on another thread"))
                .isInstanceOf(IllegalMonitorStateException.class).hasMessageContaining(name);
        view.unlock();
        assertThat(distributed.isHeldByCurrentThread()).as("after one unlock of two").isTrue();
        view.unlock();
        assertThat(distributed.holdCount()).as("after the last unlock").isZero();
        assertThatThrownBy(view::unlock).as("one unlock too many").isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining(name).hasMessageContaining("only the thread that locked it may unlock it");
        assertThat(other.tryLock(patientWait().toMillis(), TimeUnit.MILLISECONDS)).as("another client, once free").isTrue();
        other.unlock();
        assertThatThrownBy(view::newCondition).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining(name);
    }
}
