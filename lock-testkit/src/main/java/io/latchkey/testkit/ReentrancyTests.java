package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Future;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rule 3: the holding thread gets a nested lease at once; the lock is released when the last nested
 * lease closes; other threads of the process wait like any contender.
 */
abstract class ReentrancyTests extends ContractGroup {

    @Test
    @DisplayName("the holding thread gets a nested lease at once, with the same token")
    void holderGetsNestedLeaseAtOnce() throws Exception {
        DistributedLock lock = client().lock(name());
        Lease outer = hold(lock);

        Optional<Lease> inner = lock.tryLock(Duration.ZERO);

        assertThat(inner).isPresent();
        track(inner.get());
        assertThat(inner.get().fencingToken()).isEqualTo(outer.fencingToken());
        assertThat(inner.get().isValid()).isTrue();
    }

    @Test
    @DisplayName("a nested lease through another handle of the same client is nested too")
    void nestedThroughAnotherHandle() throws Exception {
        LockClient client = client();
        String name = name();
        Lease outer = hold(client.lock(name));

        Optional<Lease> inner = client.lock(name).tryLock(Duration.ZERO);

        assertThat(inner).isPresent();
        track(inner.get());
        assertThat(inner.get().fencingToken()).isEqualTo(outer.fencingToken());
    }

    @Test
    @DisplayName("the lock stays held until the last nested lease closes, inner first")
    void releasedWhenLastNestedLeaseClosesInnerFirst() throws Exception {
        releasedOnlyWithLastLease(true);
    }

    @Test
    @DisplayName("the lock stays held until the last nested lease closes, outer first")
    void releasedWhenLastNestedLeaseClosesOuterFirst() throws Exception {
        releasedOnlyWithLastLease(false);
    }

    private void releasedOnlyWithLastLease(boolean innerFirst) throws Exception {
        String name = name();
        DistributedLock lock = client().lock(name);
        DistributedLock other = client().lock(name);
        Lease outer = hold(lock);
        Lease inner = track(lock.tryLock(Duration.ZERO).orElseThrow());

        (innerFirst ? inner : outer).close();

        assertThat(other.tryLock()).as("the other client while one nested lease is open").isEmpty();
        Lease remaining = innerFirst ? outer : inner;
        assertThat(remaining.isValid()).isTrue();

        remaining.close();

        Optional<Lease> after = other.tryLock(tryBound(Duration.ZERO));
        assertThat(after).as("the other client after the last nested lease closed").isPresent();
        track(after.get());
    }

    @Test
    @DisplayName("another thread of the holding client waits like any other contender")
    void otherThreadOfSameClientWaits() throws Exception {
        DistributedLock lock = client().lock(name());
        Lease held = hold(lock);

        Future<Optional<Lease>> other = executor().submit(() -> lock.tryLock(slack()));

        assertThat(await(other, tryBound(slack()), "tryLock on another thread")).isEmpty();

        Future<Optional<Lease>> afterRelease = executor().submit(() -> lock.tryLock(patientWait()));
        held.close();
        Optional<Lease> got = await(afterRelease, tryBound(patientWait()), "tryLock on another thread after release");
        assertThat(got).isPresent();
        got.get().close();
    }
}
