package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockListener;
import io.latchkey.LockLostException;
import io.latchkey.LockRequest;
import io.latchkey.LockTask;
import io.latchkey.LockResult;
import io.latchkey.LockResult.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** Scheduled-job support of the shared layer on the in-memory backend: once per slot, atMost, atLeast and the running-call guard. */
class ScheduledJobsTest extends InMemoryFixture {

    /** The bound every wait for an asynchronous effect gets: far above any configured time. */
    static final long BOUND_MS = LEASE.plus(TIMEOUT).multipliedBy(5).toMillis();

    /** Records every event with the name of the thread it arrived on. */
    static final class Recorder implements LockListener {
        final BlockingQueue<String> events = new LinkedBlockingQueue<>();
        final BlockingQueue<String> threadNames = new LinkedBlockingQueue<>();

        private void add(String event) {
            threadNames.add(Thread.currentThread().getName());
            events.add(event);
        }

        @Override
        public void acquired(String lockName, Duration waitTime, long fencingToken) {
            add("acquired " + lockName + " token=" + fencingToken);
        }

        @Override
        public void notAcquired(String lockName, Duration waitTime) {
            add("notAcquired " + lockName);
        }

        @Override
        public void acquireFailed(String lockName, Duration waitTime, LockException exception) {
            add("acquireFailed " + lockName);
        }

        @Override
        public void released(String lockName, Duration holdTime) {
            add("released " + lockName);
        }

        @Override
        public void lost(String lockName, LockLostException reason) {
            add("lost " + lockName + ": " + reason.getMessage());
        }

        @Override
        public void backendUnavailable(String lockName, LockBackendUnavailableException exception) {
            add("backendUnavailable " + lockName);
        }

        @Override
        public void slotSkipped(String lockName, Instant slot, Instant recordedSlot) {
            add("slotSkipped " + lockName);
        }

        String next() throws InterruptedException {
            String e = events.poll(BOUND_MS, TimeUnit.MILLISECONDS);
            assertThat(e).as("an event within %d ms", BOUND_MS).isNotNull();
            return e;
        }
    }

    @Nested
    @DisplayName("local knowledge of who holds the lock")
    class LocalKnowledge {

        @Test
        @DisplayName("holdCount counts the calling thread's nested leases; the holder knows, other threads do not")
        void holdCount() throws Exception {
            DistributedLock lock = newClient().lock("job");
            assertThat(lock.holdCount()).isZero();
            assertThat(lock.isHeldByCurrentThread()).isFalse();
            assertThat(lock.isHeldByThisClient()).isFalse();
            try (Lease outer = lock.lock(Duration.ofSeconds(1))) {
                try (Lease inner = lock.lock(Duration.ofSeconds(1))) {
                    assertThat(lock.holdCount()).isEqualTo(2);
                    Future<List<Object>> other = threads.submit(
                            () -> List.of(lock.holdCount(), lock.isHeldByCurrentThread(), lock.isHeldByThisClient()));
                    assertThat(other.get(BOUND_MS, TimeUnit.MILLISECONDS)).containsExactly(0, false, true);
                }
                assertThat(lock.holdCount()).isEqualTo(1);
                assertThat(lock.isHeldByCurrentThread()).isTrue();
            }
            assertThat(lock.holdCount()).isZero();
            assertThat(lock.isHeldByThisClient()).isFalse();
        }

        @Test
        @DisplayName("an asynchronous lease belongs to this client but to no thread; another client knows nothing")
        void asyncLease() throws Exception {
            DistributedLock lock = newClient().lock("job");
            try (Lease lease = lock.tryLockAsync(Duration.ofSeconds(1)).get(BOUND_MS, TimeUnit.MILLISECONDS).orElseThrow()) {
                assertThat(lock.isHeldByThisClient()).isTrue();
                assertThat(lock.isHeldByCurrentThread()).isFalse();
                assertThat(lock.holdCount()).isZero();
                assertThat(newClient().lock("job").isHeldByThisClient()).isFalse();
            }
        }

        @Test
        @DisplayName("a lost lease is not held, though its open leases still count until closed")
        void lostLease() throws Exception {
            DistributedLock lock = newClient().lock("job");
            try (Lease lease = lock.lock(Duration.ofSeconds(1))) {
                backends.get(0).signalLoss("job", "test");
                lease.lost().toCompletableFuture().get(BOUND_MS, TimeUnit.MILLISECONDS);
                assertThat(lock.isHeldByCurrentThread()).isFalse();
                assertThat(lock.isHeldByThisClient()).isFalse();
                assertThat(lock.holdCount()).isEqualTo(1);
            }
        }
    }

    @Nested
    @DisplayName("events reach listeners on the client's event thread")
    class Events {

        @Test
        @DisplayName("acquired, not acquired, released and lost arrive in order, on the event thread")
        void lifecycle() throws Exception {
            Recorder recorder = new Recorder();
            SharedLockClient client = newClient(OPTIONS.toBuilder().listener(recorder).build());
            SharedLockClient other = newClient();
            Lease lease = client.lock("job").lock(Duration.ofSeconds(1));
            assertThat(recorder.next()).isEqualTo("acquired job token=" + lease.fencingToken());
            try (Lease held = other.lock("other").lock(Duration.ofSeconds(1))) {
                assertThat(client.lock("other").tryLock()).isEmpty();
                assertThat(recorder.next()).isEqualTo("notAcquired other");
            }
            backends.get(0).signalLoss("job", "session expired");
            assertThat(recorder.next()).startsWith("lost job").contains("session expired");
            lease.close();
            assertThat(recorder.next()).isEqualTo("released job");
            assertThat(recorder.threadNames).allSatisfy(name -> assertThat(name).startsWith("latchkey-memory-").contains("-events-"));
        }

        @Test
        @DisplayName("a nested lease is no event; the grant is acquired and released once")
        void nested() throws Exception {
            Recorder recorder = new Recorder();
            SharedLockClient client = newClient();
            client.addListener(recorder);
            DistributedLock lock = client.lock("job");
            try (Lease outer = lock.lock(Duration.ofSeconds(1)); Lease inner = lock.lock(Duration.ofSeconds(1))) {
                assertThat(recorder.next()).startsWith("acquired job");
            }
            assertThat(recorder.next()).isEqualTo("released job");
            try (Lease again = lock.lock(Duration.ofSeconds(1))) {
                assertThat(recorder.next()).startsWith("acquired job");
            }
            assertThat(recorder.next()).isEqualTo("released job");
        }

        @Test
        @DisplayName("an unreachable backend is acquireFailed and backendUnavailable")
        void unavailable() throws Exception {
            Recorder recorder = new Recorder();
            SharedLockClient client = newClient();
            client.addListener(recorder);
            backends.get(0).reachable.set(false);
            assertThatThrownBy(() -> client.lock("job").tryLock()).isInstanceOf(LockBackendUnavailableException.class);
            assertThat(recorder.next()).isEqualTo("acquireFailed job");
            assertThat(recorder.next()).isEqualTo("backendUnavailable job");
        }

        @Test
        @DisplayName("a listener that throws is logged; the lock and the other listeners go on")
        void throwingListener() throws Exception {
            Recorder recorder = new Recorder();
            SharedLockClient client = newClient();
            client.addListener(new LockListener() {
                @Override
                public void acquired(String lockName, Duration waitTime, long fencingToken) {
                    throw new IllegalStateException("listener bug");
                }
            });
            client.addListener(recorder);
            try (Lease lease = client.lock("job").lock(Duration.ofSeconds(1))) {
                assertThat(recorder.next()).startsWith("acquired job");
                assertThat(lease.isValid()).isTrue();
            }
            assertThat(recorder.next()).isEqualTo("released job");
        }

        @Test
        @DisplayName("a listener that blocks delays no lock: acquire and release go on while it is stuck")
        void blockingListener() throws Exception {
            CountDownLatch stuck = new CountDownLatch(1);
            CountDownLatch unblock = new CountDownLatch(1);
            SharedLockClient client = newClient();
            client.addListener(new LockListener() {
                @Override
                public void acquired(String lockName, Duration waitTime, long fencingToken) {
                    stuck.countDown();
                    try {
                        unblock.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            try {
                for (int i = 0; i < 3; i++) {
                    try (Lease lease = client.lock("job").lock(Duration.ofSeconds(1))) {
                        assertThat(lease.isValid()).isTrue();
                    }
                }
                assertThat(stuck.await(BOUND_MS, TimeUnit.MILLISECONDS)).isTrue();
            } finally {
                unblock.countDown();
            }
        }

        @Test
        @DisplayName("a removed listener gets no more events")
        void removed() throws Exception {
            Recorder recorder = new Recorder();
            Recorder witness = new Recorder();
            SharedLockClient client = newClient();
            client.addListener(recorder);
            client.addListener(witness);
            client.removeListener(recorder);
            try (Lease lease = client.lock("job").lock(Duration.ofSeconds(1))) {
                assertThat(witness.next()).startsWith("acquired job");
            }
            assertThat(witness.next()).isEqualTo("released job");
            assertThat(recorder.events).isEmpty();
        }
    }

    @Nested
    @DisplayName("a task runs under the lock, and only with a valid lease")
    class RunUnderLock {

        @Test
        @DisplayName("callLocked runs the task with its lease and returns its value and token")
        void runs() throws Exception {
            DistributedLock lock = newClient().lock("job");
            AtomicReference<Lease> seen = new AtomicReference<>();
            LockResult<String> result = lock.callLocked(Duration.ofSeconds(1), lease -> {
                seen.set(lease);
                assertThat(lease.isValid()).isTrue();
                assertThat(lock.isHeldByCurrentThread()).isTrue();
                return "done";
            });
            assertThat(result.outcome()).isEqualTo(Outcome.RAN);
            assertThat(result.ran()).isTrue();
            assertThat(result.value()).isEqualTo("done");
            assertThat(result.fencingToken()).hasValue(seen.get().fencingToken());
            assertThat(lock.isHeldByThisClient()).isFalse();
            assertThat(server.isHeld("job")).isFalse();
        }

        @Test
        @DisplayName("a held lock means not acquired, and the task does not run")
        void notAcquired() throws Exception {
            try (Lease held = newClient().lock("job").lock(Duration.ofSeconds(1))) {
                AtomicBoolean ran = new AtomicBoolean();
                LockResult<Void> result = newClient().lock("job").runLocked(Duration.ofMillis(50), lease -> ran.set(true));
                assertThat(result.outcome()).isEqualTo(Outcome.NOT_ACQUIRED);
                assertThat(result.ran()).isFalse();
                assertThat(ran).isFalse();
            }
        }

        @Test
        @DisplayName("a task that throws is FAILED with its exception, and the lock is released")
        void failed() throws Exception {
            DistributedLock lock = newClient().lock("job");
            Exception boom = new java.io.IOException("disk full");
            LockResult<Void> result = lock.runLocked(Duration.ofSeconds(1), lease -> {
                throw boom;
            });
            assertThat(result.outcome()).isEqualTo(Outcome.FAILED);
            assertThat(result.exception()).containsSame(boom);
            assertThat(server.isHeld("job")).isFalse();
        }

        @Test
        @DisplayName("on loss the task's thread is interrupted, the result is LOST, and the interrupt is cleared after")
        void lossInterrupts() throws Exception {
            SharedLockClient client = newClient();
            CountDownLatch running = new CountDownLatch(1);
            Future<LockResult<String>> result = threads.submit(() -> {
                LockResult<String> r = client.lock("job").callLocked(Duration.ofSeconds(1), lease -> {
                    running.countDown();
                    try {
                        new CountDownLatch(1).await(BOUND_MS, TimeUnit.MILLISECONDS);
                        return "not interrupted";
                    } catch (InterruptedException e) {
                        return "interrupted";
                    }
                });
                assertThat(Thread.currentThread().isInterrupted()).as("interrupt status after the call").isFalse();
                return r;
            });
            assertThat(running.await(BOUND_MS, TimeUnit.MILLISECONDS)).isTrue();
            backends.get(0).signalLoss("job", "session expired");
            LockResult<String> r = result.get(BOUND_MS, TimeUnit.MILLISECONDS);
            assertThat(r.outcome()).isEqualTo(Outcome.LOST);
            assertThat(r.ran()).isTrue();
            assertThat(r.value()).isEqualTo("interrupted");
            assertThat(r.loss()).hasValueSatisfying(l -> assertThat(l).hasMessageContaining("session expired"));
        }

        @Test
        @DisplayName("with interruptOnLoss off the task is not interrupted, and still learns of the loss in the result")
        void lossWithoutInterrupt() throws Exception {
            SharedLockClient client = newClient();
            LockResult<Boolean> r = client.lock("job").callLocked(
                    LockRequest.builder().wait(Duration.ofSeconds(1)).interruptOnLoss(false).build(), lease -> {
                        backends.get(0).signalLoss("job", "session expired");
                        lease.lost().toCompletableFuture().get(BOUND_MS, TimeUnit.MILLISECONDS);
                        return Thread.currentThread().isInterrupted();
                    });
            assertThat(r.outcome()).isEqualTo(Outcome.LOST);
            assertThat(r.value()).isFalse();
        }
    }

    @Nested
    @DisplayName("atMost and atLeast per call")
    class HoldBounds {

        @Test
        @DisplayName("bad bounds are IllegalArgumentExceptions that quote them")
        void validation() {
            assertThatThrownBy(() -> LockRequest.builder().atMost(Duration.ofSeconds(1)).atLeast(Duration.ofSeconds(2)).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("atLeast=2s").hasMessageContaining("atMost=1s");
            assertThatThrownBy(() -> LockRequest.builder().atMost(Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("atMost must be positive: 0s");
            assertThatThrownBy(() -> LockRequest.builder().atLeast(Duration.ofMillis(-1500)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("atLeast must be positive: -1500ms");
            assertThatThrownBy(() -> newClient().lock("job").tryLock(LockRequest.builder().slot(Instant.EPOCH).build()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'job'");
        }

        @Test
        @DisplayName("atMost ends the lease though renewal goes on: invalid, lost() with the reason, the backend released")
        void atMost() throws Exception {
            Duration atMost = LEASE.multipliedBy(2); // longer than the lease: only renewal could keep it this long
            Recorder recorder = new Recorder();
            SharedLockClient client = newClient();
            client.addListener(recorder);
            long start = System.nanoTime();
            try (Lease lease = client.lock("job").tryLock(
                    LockRequest.builder().wait(Duration.ofSeconds(1)).atMost(atMost).build()).orElseThrow()) {
                assertThat(recorder.next()).startsWith("acquired");
                LockLostException loss = lease.lost().toCompletableFuture().get(BOUND_MS, TimeUnit.MILLISECONDS);
                assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(atMost.toNanos() - TIMEOUT.toNanos());
                assertThat(loss.reason()).isEqualTo(LockLostException.Reason.AT_MOST);
                assertThat(loss).hasMessageContaining("atMost of 2400ms").hasMessageContaining("'job'");
                assertThat(lease.isValid()).isFalse();
                assertThat(recorder.next()).startsWith("lost job").contains("atMost");
                // The backend lock is freed in the background: another client gets it without waiting for close.
                assertThat(newClient().lock("job").tryLock(Duration.ofMillis(BOUND_MS))).isPresent();
            }
        }

        @Test
        @DisplayName("atLeast keeps the lock after an early close until acquisition + atLeast, held by this client")
        void atLeastKeptByClient() throws Exception {
            atLeast(false);
            assertThat(backends.get(0).handovers).hasValue(0);
            assertThat(backends.get(0).releases).hasValue(1);
        }

        @Test
        @DisplayName("atLeast is handed to the backend's expiry where the backend can")
        void atLeastHandedToBackend() throws Exception {
            atLeast(true);
            assertThat(backends.get(0).handovers).hasValue(1);
            assertThat(backends.get(0).releases).hasValue(0);
        }

        void atLeast(boolean handover) throws Exception {
            Duration atLeast = LEASE.multipliedBy(2); // longer than the lease: the backend must not just expire it
            SharedLockClient client = newClient();
            backends.get(0).expiryHandover.set(handover);
            SharedLockClient other = newClient();
            long start = System.nanoTime();
            LockResult<Void> r = client.lock("job").runLocked(
                    LockRequest.builder().atMost(atLeast.multipliedBy(2)).atLeast(atLeast).build(), lease -> { });
            assertThat(r.outcome()).isEqualTo(Outcome.RAN);
            assertThat(other.lock("job").tryLock()).isEmpty();
            Optional<Lease> next = other.lock("job").tryLock(Duration.ofMillis(BOUND_MS));
            long got = System.nanoTime();
            assertThat(next).isPresent();
            assertThat(got - start).as("the other client waits out atLeast").isGreaterThanOrEqualTo(atLeast.toNanos());
            next.get().close();
        }

        @Test
        @DisplayName("atLeast kept by the client also keeps other threads of the same client out")
        void atLeastLocally() throws Exception {
            Duration atLeast = LEASE;
            SharedLockClient client = newClient();
            long start = System.nanoTime();
            client.lock("job").runLocked(LockRequest.builder().atLeast(atLeast).build(), lease -> { });
            Optional<Lease> again = threads.submit(() -> client.lock("job").tryLock(Duration.ofMillis(BOUND_MS)))
                    .get(BOUND_MS * 2, TimeUnit.MILLISECONDS);
            assertThat(again).isPresent();
            assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(atLeast.toNanos());
            again.get().close();
        }

        @Test
        @DisplayName("closing the client ends an atLeast kept by the client, and releases the lock")
        void atLeastEndsWithClient() throws Exception {
            SharedLockClient client = newClient();
            client.lock("job").runLocked(LockRequest.builder().atLeast(Duration.ofHours(1)).build(), lease -> { });
            assertThat(server.isHeld("job")).isTrue();
            client.close();
            assertThat(server.isHeld("job")).isFalse();
            assertThat(newClient().lock("job").tryLock()).isPresent();
        }
    }

    @Nested
    @DisplayName("once per schedule slot")
    class OncePerSlot {

        final Instant midnight = Instant.parse("2030-01-01T00:00:00Z");

        LockRequest slot(Instant slot) {
            return LockRequest.builder().wait(Duration.ofMillis(BOUND_MS)).slot(slot).build();
        }

        @Test
        @DisplayName("the second node for the same slot skips, an earlier slot skips, a later slot runs")
        void skips() throws Exception {
            Recorder recorder = new Recorder();
            SharedLockClient first = newClient();
            SharedLockClient second = newClient();
            second.addListener(recorder);
            assertThat(first.lock("job").runLocked(slot(midnight), lease -> { }).outcome()).isEqualTo(Outcome.RAN);
            AtomicBoolean ran = new AtomicBoolean();
            LockResult<Void> again = second.lock("job").runLocked(slot(midnight), lease -> ran.set(true));
            assertThat(again.outcome()).isEqualTo(Outcome.SLOT_DONE);
            assertThat(again.recordedSlot()).contains(midnight);
            assertThat(ran).isFalse();
            assertThat(recorder.next()).startsWith("acquired");
            assertThat(recorder.next()).isEqualTo("slotSkipped job");
            assertThat(second.lock("job").runLocked(slot(midnight.minusSeconds(86400)), lease -> { }).outcome())
                    .isEqualTo(Outcome.SLOT_DONE);
            assertThat(second.lock("job").runLocked(slot(midnight.plusSeconds(86400)), lease -> { }).outcome())
                    .isEqualTo(Outcome.RAN);
        }

        @Test
        @DisplayName("four nodes firing the same slot: exactly one runs it, the others skip")
        void fourNodes() throws Exception {
            AtomicInteger runs = new AtomicInteger();
            CountDownLatch fire = new CountDownLatch(1);
            List<Future<LockResult<Void>>> results = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                DistributedLock lock = newClient().lock("job");
                results.add(threads.submit(() -> {
                    fire.await();
                    return lock.runLocked(slot(midnight), lease -> runs.incrementAndGet());
                }));
            }
            fire.countDown();
            List<Outcome> outcomes = new ArrayList<>();
            for (Future<LockResult<Void>> f : results) {
                outcomes.add(f.get(BOUND_MS * 4, TimeUnit.MILLISECONDS).outcome());
            }
            assertThat(runs).hasValue(1);
            assertThat(outcomes).containsExactlyInAnyOrder(Outcome.RAN, Outcome.SLOT_DONE, Outcome.SLOT_DONE, Outcome.SLOT_DONE);
        }

        @Test
        @DisplayName("a failed task does not mark its slot, unless markSlotOnFailure is on")
        void failure() throws Exception {
            DistributedLock lock = newClient().lock("job");
            LockTask fail = lease -> {
                throw new IllegalStateException("boom");
            };
            assertThat(lock.runLocked(slot(midnight), fail).outcome()).isEqualTo(Outcome.FAILED);
            assertThat(lock.runLocked(slot(midnight).toBuilder().markSlotOnFailure(true).build(), fail).outcome())
                    .isEqualTo(Outcome.FAILED);
            assertThat(lock.runLocked(slot(midnight), lease -> { }).outcome()).isEqualTo(Outcome.SLOT_DONE);
        }

        @Test
        @DisplayName("a holder that lost its lease while running does not mark the slot; the next holder's record stands")
        void lostHolderDoesNotMark() throws Exception {
            SharedLockClient paused = newClient();
            SharedLockClient next = newClient();
            Instant later = midnight.plusSeconds(60);
            LockResult<Void> r = paused.lock("job").runLocked(slot(later).toBuilder().interruptOnLoss(false).build(), lease -> {
                backends.get(0).renewing.set(false); // as if paused: the server's hold runs out
                LockResult<Void> other = next.lock("job").runLocked(slot(midnight), l -> { });
                assertThat(other.outcome()).isEqualTo(Outcome.RAN);
            });
            assertThat(r.outcome()).isEqualTo(Outcome.LOST);
            assertThat(r.ran()).isTrue();
            // The paused holder's later slot was not recorded: it runs again.
            assertThat(next.lock("job").runLocked(slot(later), l -> { }).outcome()).isEqualTo(Outcome.RAN);
        }

        @Test
        @DisplayName("a backend that records no slots is an error that says so, and nothing runs")
        void unsupported() {
            SharedLockClient client = newClient();
            backends.get(0).slots.set(false);
            AtomicBoolean ran = new AtomicBoolean();
            assertThatThrownBy(() -> client.lock("job").runLocked(slot(midnight), lease -> ran.set(true)))
                    .isInstanceOf(LockException.class).hasMessageContaining("does not record schedule slots");
            assertThat(ran).isFalse();
            assertThat(server.isHeld("job")).isFalse();
        }
    }
}
