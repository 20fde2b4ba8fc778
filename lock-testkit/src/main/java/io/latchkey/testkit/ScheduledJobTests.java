package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockListener;
import io.latchkey.LockLostException;
import io.latchkey.LockRequest;
import io.latchkey.LockResult;
import io.latchkey.LockResult.Outcome;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Scheduled jobs: a task under the lock, the per-call {@code atMost} and {@code atLeast}
 * bounds, and lock events, the same on every backend. Once per slot is its own group,
 * {@link OncePerSlotTests}. Tagged {@code scheduled-jobs}, so that
 * {@code -Dtest=<contract test> -Dgroups=scheduled-jobs} runs this group alone.
 */
@Tag("scheduled-jobs")
abstract class ScheduledJobTests extends ContractGroup {

    @Test
    @DisplayName("runLocked runs the task under a valid lease and releases; on a held lock it does not run")
    void runsUnderTheLock() throws Exception {
        String name = name();
        LockResult<Long> r = client().lock(name).callLocked(patientWait(), lease -> {
            assertThat(lease.isValid()).isTrue();
            return lease.fencingToken();
        });
        assertThat(r.outcome()).isEqualTo(Outcome.RAN);
        assertThat(r.fencingToken()).hasValue(r.value());
        Lease held = hold(client().lock(name));
        AtomicBoolean ran = new AtomicBoolean();
        assertThat(client().lock(name).runLocked(Duration.ZERO, lease -> ran.set(true)).outcome()).isEqualTo(Outcome.NOT_ACQUIRED);
        assertThat(ran).isFalse();
        held.close();
    }

    @Test
    @DisplayName("atMost ends a renewed lease: lost with reason AT_MOST, and another client gets the lock")
    void atMostEndsTheLease() throws Exception {
        String name = name();
        Duration atMost = lease().multipliedBy(2); // only renewal could keep it this long
        Lease lease = track(client().lock(name).tryLock(
                LockRequest.builder().wait(patientWait()).atMost(atMost).build()).orElseThrow());
        LockLostException loss = lease.lost().toCompletableFuture()
                .get(atMost.plus(slack()).plus(timeout()).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(loss.reason()).isEqualTo(LockLostException.Reason.AT_MOST);
        assertThat(lease.isValid()).isFalse();
        Optional<Lease> next = client().lock(name).tryLock(tryBound(failoverBound()));
        assertThat(next).as("the lock after atMost, released in the background").isPresent();
        track(next.get());
    }

    @Test
    @DisplayName("atLeast keeps the lock after an early close until acquisition + atLeast")
    void atLeastKeepsTheLock() throws Exception {
        String name = name();
        Duration atLeast = lease().multipliedBy(2); // past the lease: expiry alone would free it earlier
        long start = System.nanoTime();
        LockResult<Void> r = client().lock(name).runLocked(LockRequest.builder().wait(patientWait()).atLeast(atLeast).build(),
                lease -> { });
        assertThat(r.outcome()).isEqualTo(Outcome.RAN);
        assertThat(client().lock(name).tryLock()).as("tryLock right after the early close").isEmpty();
        Optional<Lease> next = client().lock(name).tryLock(atLeast.plus(failoverBound()));
        assertThat(next).isPresent();
        track(next.get());
        assertThat(System.nanoTime() - start).as("nanos until another client got the lock")
                .isGreaterThanOrEqualTo(atLeast.toNanos());
    }

    @Test
    @DisplayName("events: acquired with the token, not acquired, released, on the client's event thread")
    void events() throws Exception {
        String name = name();
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        LockClient client = client();
        client.addListener(new LockListener() {
            @Override
            public void acquired(String lockName, Duration waitTime, long fencingToken) {
                events.add("acquired " + fencingToken + " on " + Thread.currentThread().getName());
            }

            @Override
            public void notAcquired(String lockName, Duration waitTime) {
                events.add("notAcquired");
            }

            @Override
            public void released(String lockName, Duration holdTime) {
                events.add("released");
            }
        });
        Lease lease = client.lock(name).tryLock(patientWait()).orElseThrow();
        long bound = tryBound(patientWait()).toMillis();
        assertThat(events.poll(bound, TimeUnit.MILLISECONDS)).startsWith("acquired " + lease.fencingToken() + " on latchkey-")
                .contains("-events-");
        assertThat(client().lock(name).tryLock()).isEmpty();
        lease.close();
        assertThat(events.poll(bound, TimeUnit.MILLISECONDS)).isEqualTo("released");
        Lease other = hold(client().lock(name));
        assertThat(client.lock(name).tryLock()).isEmpty();
        assertThat(events.poll(bound, TimeUnit.MILLISECONDS)).isEqualTo("notAcquired");
        other.close();
    }
}
