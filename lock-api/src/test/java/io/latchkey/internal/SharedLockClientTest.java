package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockLostException;
import io.latchkey.LockNotAcquiredException;
import io.latchkey.LockOptions;
import io.latchkey.LockRequest;
import io.latchkey.memory.InMemoryBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The shared layer on an in-memory backend: rules 2, 3, 4, 7 and 10. */
class SharedLockClientTest extends InMemoryFixture {

    static long millisSince(long start) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    @Nested
    @DisplayName("local order: a client's threads on one name")
    class LocalOrder {

        @Test
        @DisplayName("on a backend that grants in arrival order, a thread that releases and asks again at once does not"
                + " overtake a thread of its client already waiting")
        void releasingThreadQueuesBehindAWaitingThread() throws Exception {
            SharedLockClient client = newClient();
            assertThat(backends.get(0).fairOrder()).as("the in-memory backend grants in arrival order").isTrue();
            DistributedLock lock = client.lock("order");
            Lease held = lock.tryLock().orElseThrow();
            Future<Optional<Lease>> waiter = threads.submit(() -> lock.tryLock(LEASE.multipliedBy(4)));
            long waitingSince = System.nanoTime();
            while (!client.localOf("order").gate.hasQueuedThreads()) {
                assertThat(millisSince(waitingSince)).as("ms until the other thread waits at the name's gate")
                        .isLessThan(LEASE.toMillis());
                Thread.sleep(5);
            }
            held.close();
            assertThat(lock.tryLock()).as("the releasing thread, asking again at once").isEmpty();
            Optional<Lease> next = waiter.get(LEASE.multipliedBy(4).plus(TIMEOUT).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(next).as("the thread that waited").isPresent();
            next.get().close();
        }
    }

    @Nested
    @DisplayName("rule 2: tryLock returns within its deadline")
    class Deadlines {

        @Test
        @DisplayName("tryLock(ZERO) on a held lock returns empty without waiting for the holder")
        void zeroWaitDoesNotBlock() throws Exception {
            try (Lease held = newClient().lock("job").lock(Duration.ofSeconds(1))) {
                long start = System.nanoTime();
                assertThat(newClient().lock("job").tryLock()).isEmpty();
                assertThat(millisSince(start)).isLessThan(TIMEOUT.toMillis());
            }
        }

        @Test
        @DisplayName("tryLock(wait) on a held lock returns empty after the wait, within wait plus timeout")
        void waitsThenGivesUp() throws Exception {
            try (Lease held = newClient().lock("job").lock(Duration.ofSeconds(1))) {
                Duration wait = Duration.ofMillis(300);
                long start = System.nanoTime();
                assertThat(newClient().lock("job").tryLock(wait)).isEmpty();
                assertThat(millisSince(start)).isBetween(wait.toMillis(), wait.plus(TIMEOUT).toMillis());
            }
        }

        @Test
        @DisplayName("lock(wait) throws LockNotAcquiredException naming the lock")
        void lockThrows() throws Exception {
            try (Lease held = newClient().lock("job").lock(Duration.ofSeconds(1))) {
                assertThatThrownBy(() -> newClient().lock("job").lock(Duration.ofMillis(50)))
                        .isInstanceOf(LockNotAcquiredException.class)
                        .hasMessageContaining("'job'");
            }
        }

        @Test
        @DisplayName("an unreachable backend is an exception within wait plus timeout, never empty")
        void unreachableBackend() {
            SharedLockClient client = newClient();
            backends.get(0).reachable.set(false);
            long start = System.nanoTime();
            assertThatThrownBy(() -> client.lock("job").tryLock(Duration.ofMillis(100)))
                    .isInstanceOf(LockBackendUnavailableException.class)
                    .hasMessageContaining("'job'");
            assertThat(millisSince(start)).isLessThan(Duration.ofMillis(100).plus(TIMEOUT).multipliedBy(2).toMillis());
        }

        @Test
        @DisplayName("a negative wait is an IllegalArgumentException naming the lock")
        void negativeWait() {
            assertThatThrownBy(() -> newClient().lock("job").tryLock(Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'job'");
        }

        @Test
        @DisplayName("a waiter gets the lock as soon as the holder releases it")
        void waiterGetsIt() throws Exception {
            Lease held = newClient().lock("job").lock(Duration.ofSeconds(1));
            DistributedLock other = newClient().lock("job");
            Future<Optional<Lease>> waiter = threads.submit(() -> other.tryLock(Duration.ofSeconds(10)));
            held.close();
            Optional<Lease> got = waiter.get(5, TimeUnit.SECONDS);
            assertThat(got).isPresent();
            assertThat(got.get().fencingToken()).isGreaterThan(held.fencingToken());
            got.get().close();
        }
    }

    @Nested
    @DisplayName("rule 3: reentrancy per thread")
    class Reentrancy {

        @Test
        @DisplayName("the holding thread gets a nested lease at once, with the same token")
        void nested() throws Exception {
            DistributedLock lock = newClient().lock("job");
            try (Lease outer = lock.lock(Duration.ofSeconds(1))) {
                Optional<Lease> inner = lock.tryLock();
                assertThat(inner).isPresent();
                assertThat(inner.get().fencingToken()).isEqualTo(outer.fencingToken());
                assertThat(backends.get(0).acquireCalls).hasValue(1);
                inner.get().close();
                assertThat(outer.isValid()).isTrue();
                assertThat(server.isHeld("job")).isTrue();
            }
            assertThat(server.isHeld("job")).isFalse();
        }

        @Test
        @DisplayName("the lock is released only when the last nested lease closes, in any order")
        void lastCloseReleases() throws Exception {
            DistributedLock lock = newClient().lock("job");
            Lease outer = lock.lock(Duration.ofSeconds(1));
            Lease inner = lock.lock(Duration.ofSeconds(1));
            outer.close();
            assertThat(inner.isValid()).isTrue();
            assertThat(newClient().lock("job").tryLock()).isEmpty();
            inner.close();
            assertThat(server.isHeld("job")).isFalse();
            assertThat(backends.get(0).releases).hasValue(1);
        }

        @Test
        @DisplayName("another thread of the same client waits like any contender")
        void otherThreadWaits() throws Exception {
            DistributedLock lock = newClient().lock("job");
            try (Lease held = lock.lock(Duration.ofSeconds(1))) {
                assertThat(threads.submit(() -> lock.tryLock(Duration.ofMillis(100))).get()).isEmpty();
            }
            Optional<Lease> after = threads.submit(() -> lock.tryLock()).get();
            assertThat(after).isPresent();
            after.get().close();
        }

        @Test
        @DisplayName("threads of one client reach the backend one at a time")
        void localGating() throws Exception {
            SharedLockClient client = newClient();
            InMemoryBackend backend = backends.get(0);
            DistributedLock lock = client.lock("job");
            AtomicInteger got = new AtomicInteger();
            List<Future<?>> all = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                all.add(threads.submit(() -> {
                    try (Lease lease = lock.lock(Duration.ofSeconds(20))) {
                        got.incrementAndGet();
                    }
                    return null;
                }));
            }
            for (Future<?> f : all) {
                f.get(30, TimeUnit.SECONDS);
            }
            assertThat(got).hasValue(6);
            assertThat(backend.maxConcurrentAcquires).hasValue(1);
            assertThat(backend.acquireCalls).hasValue(6);
        }

        @Test
        @DisplayName("a nested acquire on a lost lease throws LockLostException instead of pretending")
        void nestedOnLost() throws Exception {
            DistributedLock lock = newClient().lock("job");
            try (Lease outer = lock.lock(Duration.ofSeconds(1))) {
                backends.get(0).signalLoss("job", "session expired");
                assertThatThrownBy(lock::tryLock).isInstanceOf(LockLostException.class)
                        .hasMessageContaining("'job'").hasMessageContaining("close that lease");
            }
        }
    }

    @Nested
    @DisplayName("rule 4: a lease may be closed from any thread, once")
    class Ownership {

        @Test
        @DisplayName("a lease closed by another thread releases the lock")
        void closeFromOtherThread() throws Exception {
            Lease lease = newClient().lock("job").lock(Duration.ofSeconds(1));
            threads.submit(lease::close).get();
            assertThat(lease.isValid()).isFalse();
            assertThat(server.isHeld("job")).isFalse();
            Optional<Lease> next = newClient().lock("job").tryLock();
            assertThat(next).isPresent();
            next.get().close();
        }

        @Test
        @DisplayName("close is idempotent: a second close releases nothing more")
        void idempotent() throws Exception {
            DistributedLock lock = newClient().lock("job");
            Lease outer = lock.lock(Duration.ofSeconds(1));
            Lease inner = lock.lock(Duration.ofSeconds(1));
            inner.close();
            inner.close();
            assertThat(outer.isValid()).isTrue();
            assertThat(server.isHeld("job")).isTrue();
            outer.close();
            outer.close();
            assertThat(backends.get(0).releases).hasValue(1);
        }

        @Test
        @DisplayName("closing a lost lease never releases the lock of its new holder")
        void neverReleasesOthers() throws Exception {
            Lease old = newClient().lock("job").lock(Duration.ofSeconds(1));
            backends.get(0).renewing.set(false);
            server.evict("job");
            Lease current = newClient().lock("job").lock(Duration.ofSeconds(1));
            old.close();
            assertThat(current.isValid()).isTrue();
            assertThat(server.isHeld("job")).isTrue();
            current.close();
        }

        @Test
        @DisplayName("a lease used after close says so")
        void useAfterClose() throws Exception {
            Lease lease = newClient().lock("job").lock(Duration.ofSeconds(1));
            lease.close();
            assertThatThrownBy(lease::ensureValid).isInstanceOf(IllegalStateException.class).hasMessageContaining("'job'");
            assertThat(lease.remaining()).isEqualTo(Duration.ZERO);
        }
    }

    @Nested
    @DisplayName("rule 7: loss is signalled, never silent")
    class Loss {

        @Test
        @DisplayName("a release that fails after a loss is one WARN line naming the lock, without a stack trace")
        void quietReleaseFailure() throws Exception {
            java.io.PrintStream stderr = System.err;
            java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
            Lease lease = newClient().lock("job").lock(Duration.ofSeconds(1));
            InMemoryBackend backend = backends.get(0);
            System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
            try {
                backend.reachable.set(false);
                lease.lost().toCompletableFuture().get(LEASE.multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS);
                long until = System.nanoTime() + TIMEOUT.multipliedBy(4).toNanos();
                while (!captured.toString(java.nio.charset.StandardCharsets.UTF_8).contains("release of lost lock")
                        && System.nanoTime() - until < 0) {
                    Thread.sleep(10);
                }
            } finally {
                System.setErr(stderr);
            }
            List<String> lines = captured.toString(java.nio.charset.StandardCharsets.UTF_8).lines()
                    .filter(l -> !l.isBlank()).collect(java.util.stream.Collectors.toList());
            List<String> releaseLines = lines.stream().filter(l -> l.contains("release of lost lock")).collect(java.util.stream.Collectors.toList());
            assertThat(releaseLines).hasSize(1);
            assertThat(releaseLines.get(0)).contains("WARN").contains("'job'").contains("memory server unreachable");
            assertThat(lines).noneMatch(l -> l.startsWith("\tat ") || l.contains("Exception:"));
            backend.reachable.set(true);
            lease.close();
        }

        @Test
        @DisplayName("a lease whose renewal evidence stops is invalid by its deadline, with no call from the backend")
        void expiresOnItsOwn() throws Exception {
            Lease lease = newClient().lock("job").lock(Duration.ofSeconds(1));
            // Every confirmation so far was sent before this instant, so the deadline is at most
            // stopped + lease - margin.
            backends.get(0).renewing.set(false);
            long stopped = System.nanoTime();
            CompletableFuture<LockLostException> lost = lease.lost().toCompletableFuture();
            long deadline = stopped + LEASE.minus(MARGIN).toNanos();
            // The timer alone completes lost(): nobody calls isValid meanwhile.
            LockLostException reason = lost.get(LEASE.multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(reason.getMessage()).contains("'job'").contains("memory key");
            assertThat(System.nanoTime() - deadline).isGreaterThanOrEqualTo(-LEASE.toNanos());
            assertThat(lease.isValid()).isFalse();
            assertThat(lease.remaining()).isEqualTo(Duration.ZERO);
            assertThatThrownBy(lease::ensureValid).isInstanceOf(LockLostException.class);
        }

        @Test
        @DisplayName("isValid turns false at the deadline even if the timer has not run (a paused process)")
        void checkedOnTheClock() throws Exception {
            Lease lease = newClient().lock("job").lock(Duration.ofSeconds(1));
            backends.get(0).renewing.set(false);
            long deadline = System.nanoTime() + LEASE.minus(MARGIN).toNanos();
            while (System.nanoTime() - deadline < 0) {
                Thread.sleep(10);
            }
            assertThat(lease.isValid()).isFalse();
        }

        @Test
        @DisplayName("a renewed lease stays valid far past its lease")
        void renewalKeepsIt() throws Exception {
            Lease lease = newClient().lock("job").lock(Duration.ofSeconds(1));
            long until = System.nanoTime() + LEASE.multipliedBy(3).toNanos();
            while (System.nanoTime() - until < 0) {
                assertThat(lease.isValid()).isTrue();
                assertThat(lease.remaining()).isPositive().isLessThanOrEqualTo(LEASE.minus(MARGIN));
                Thread.sleep(50);
            }
            assertThat(lease.lost().toCompletableFuture()).isNotDone();
            lease.close();
        }

        @Test
        @DisplayName("a loss reported by the backend invalidates the lease at once and completes lost()")
        void backendLoss() throws Exception {
            Lease lease = newClient().lock("job").lock(Duration.ofSeconds(1));
            backends.get(0).signalLoss("job", "session expired");
            assertThat(lease.isValid()).isFalse();
            assertThat(lease.lost().toCompletableFuture().getNow(null)).isNotNull()
                    .hasMessageContaining("session expired").hasMessageContaining("'job'");
            assertThatThrownBy(lease::ensureValid).isInstanceOf(LockLostException.class).hasMessageContaining("session expired");
        }

        @Test
        @DisplayName("grants taken and released within their lease cost the client's timer no task each: one per lease at most")
        void deadlinesShareOneTimerTask() throws Exception {
            SharedLockClient client = newClient();
            long start = System.nanoTime();
            long before = client.deadlines().scheduled();
            for (int i = 0; i < 200; i++) {
                try (Lease lease = client.lock("job-" + i % 3).lock(Duration.ofSeconds(1))) {
                    assertThat(lease.isValid()).isTrue();
                }
            }
            // the watch's one task runs at the first grant's deadline, then at most once per lease after
            long periods = (System.nanoTime() - start) / LEASE.minus(MARGIN).toNanos();
            assertThat(client.deadlines().scheduled() - before).isLessThanOrEqualTo(1 + 2 * periods);
            assertThat(client.deadlines().size()).isZero();
        }

        @Test
        @DisplayName("an atMost that ends before the deadline of a lease held already still completes lost() on time")
        void earlierDeadlineAfterALaterOne() throws Exception {
            Duration longLease = Duration.ofSeconds(20);
            LockOptions options = LockOptions.builder().lease(longLease).timeout(TIMEOUT).build();
            InMemoryBackend backend = new InMemoryBackend(server, longLease, TIMEOUT, options);
            SharedLockClient client = new SharedLockClient("memory", backend, options);
            backends.add(backend);
            clients.add(client);
            try (Lease first = client.lock("first").lock(Duration.ofSeconds(1))) {
                Duration atMost = Duration.ofMillis(300);
                long start = System.nanoTime();
                try (Lease second = client.lock("second").tryLock(
                        LockRequest.builder().wait(Duration.ofSeconds(1)).atMost(atMost).build()).orElseThrow()) {
                    // the first lease's deadline, about 18 s away, must not hold back the second's end: its timer
                    // completes lost() long before (nothing here asks isValid meanwhile)
                    LockLostException loss = second.lost().toCompletableFuture()
                            .get(longLease.dividedBy(2).toMillis(), TimeUnit.MILLISECONDS);
                    assertThat(loss.reason()).isEqualTo(LockLostException.Reason.AT_MOST);
                    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(atMost.toNanos());
                    assertThat(first.isValid()).isTrue();
                    assertThat(first.lost().toCompletableFuture()).isNotDone();
                }
            }
        }

        @Test
        @DisplayName("a confirmation after the deadline does not bring a lost lease back")
        void noResurrection() throws Exception {
            Lease lease = newClient().lock("job").lock(Duration.ofSeconds(1));
            backends.get(0).renewing.set(false);
            lease.lost().toCompletableFuture().get(LEASE.multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS);
            backends.get(0).renewing.set(true);
            Thread.sleep(LEASE.toMillis() / 2);
            assertThat(lease.isValid()).isFalse();
        }

        @Test
        @DisplayName("a lease closed normally never completes lost()")
        void closedIsNotLost() throws Exception {
            Lease lease = newClient().lock("job").lock(Duration.ofSeconds(1));
            lease.close();
            backends.get(0).signalLoss("job", "late");
            assertThat(lease.lost().toCompletableFuture()).isNotDone();
        }
    }

    @Nested
    @DisplayName("tryLockAsync")
    class Async {

        @Test
        @DisplayName("completes with a lease any thread can close, not reentrant for the caller")
        void async() throws Exception {
            DistributedLock lock = newClient().lock("job");
            Lease lease = lock.tryLockAsync(Duration.ofSeconds(1)).get(5, TimeUnit.SECONDS).orElseThrow();
            assertThat(lease.isValid()).isTrue();
            assertThat(lock.tryLock()).isEmpty();
            lease.close();
            assertThat(server.isHeld("job")).isFalse();
        }

        @Test
        @DisplayName("a cancelled wait leaves nothing held")
        void cancelled() throws Exception {
            Lease held = newClient().lock("job").lock(Duration.ofSeconds(1));
            CompletableFuture<Optional<Lease>> waiting = newClient().lock("job").tryLockAsync(Duration.ofSeconds(30));
            waiting.cancel(true);
            held.close();
            Optional<Lease> next = newClient().lock("job").tryLock(Duration.ofSeconds(2));
            assertThat(next).isPresent();
            next.get().close();
        }

        @Test
        @DisplayName("more waits than the pool's threads: at most ASYNC_THREADS threads, and every wait still ends in its bound")
        void boundedThreads() throws Exception {
            Lease held = newClient().lock("job").lock(Duration.ofSeconds(1));
            SharedLockClient waiters = newClient();
            Duration wait = Duration.ofMillis(300);
            int calls = SharedLockClient.ASYNC_THREADS + 8;
            long start = System.nanoTime();
            List<CompletableFuture<Optional<Lease>>> pending = new ArrayList<>();
            for (int i = 0; i < calls; i++) {
                pending.add(waiters.lock("job").tryLockAsync(wait));
            }
            int most = 0;
            while (!pending.stream().allMatch(CompletableFuture::isDone)) {
                most = Math.max(most, asyncThreadsAlive());
                Thread.sleep(5);
            }
            // The queued calls start after the first ones gave up, their waits already spent, and still
            // try once: together they end within one wait plus a timeout, not one wait each.
            assertThat(millisSince(start)).isLessThan(wait.plus(TIMEOUT).multipliedBy(2).toMillis());
            for (CompletableFuture<Optional<Lease>> f : pending) {
                assertThat(f.get()).isEmpty();
            }
            assertThat(most).isPositive().isLessThanOrEqualTo(SharedLockClient.ASYNC_THREADS);
            held.close();
        }

        private int asyncThreadsAlive() {
            return (int) Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().startsWith("latchkey-memory-") && t.getName().contains("-async-")).count();
        }
    }

    @Nested
    @DisplayName("rule 10: nothing leaks")
    class NothingLeaks {

        @Test
        @DisplayName("closing the client releases its leases, stops its threads and closes the backend")
        void closeReleasesEverything() throws Exception {
            SharedLockClient client = newClient();
            Lease a = client.lock("a").lock(Duration.ofSeconds(1));
            Lease b = client.lock("b").tryLockAsync(Duration.ofSeconds(1)).get(5, TimeUnit.SECONDS).orElseThrow();
            client.close();
            assertThat(a.isValid()).isFalse();
            assertThat(b.isValid()).isFalse();
            assertThat(server.lockCount()).isZero();
            assertThat(backends.get(0).closed).isTrue();
            // close() has stopped the pools; a worker may still be running its last lines as the pool ends
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().startsWith("latchkey-memory")) {
                    t.join(client.options().timeout().toMillis());
                }
            }
            assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.isAlive() && t.getName().startsWith("latchkey-memory"));
            assertThatThrownBy(() -> client.lock("a")).isInstanceOf(IllegalStateException.class);
        }

        @Test
        @DisplayName("a client forgets lock names once their leases close")
        void namesAreForgotten() throws Exception {
            SharedLockClient client = newClient();
            for (int i = 0; i < 100; i++) {
                client.lock("job-" + i).lock(Duration.ofSeconds(1)).close();
                assertThat(client.lock("job-" + i).tryLock(Duration.ZERO)).isPresent().get().satisfies(Lease::close);
            }
            DistributedLock lock = client.lock("busy");
            Lease held = lock.lock(Duration.ofSeconds(1));
            assertThat(threads.submit(() -> lock.tryLock(Duration.ofMillis(50))).get()).isEmpty();
            assertThat(client.trackedNames()).isEqualTo(1);
            held.close();
            assertThat(client.trackedNames()).isZero();
        }

        @Test
        @DisplayName("a waiter blocked when the client closes gets an exception, not the lock")
        void waiterOnClose() throws Exception {
            SharedLockClient client = newClient();
            DistributedLock lock = client.lock("job");
            Lease held = lock.lock(Duration.ofSeconds(1));
            CompletableFuture<Thread> waiting = new CompletableFuture<>();
            Future<Optional<Lease>> waiter = threads.submit(() -> {
                waiting.complete(Thread.currentThread());
                return lock.tryLock(Duration.ofSeconds(30));
            });
            Thread waiterThread = waiting.get(10, TimeUnit.SECONDS);
            // Blocked means parked in the wait, not merely started: poll its state until the wait's own bound.
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (waiterThread.getState() != Thread.State.TIMED_WAITING && System.nanoTime() - until < 0) {
                Thread.onSpinWait();
            }
            assertThat(waiterThread.getState()).as("the waiter is blocked in tryLock").isEqualTo(Thread.State.TIMED_WAITING);
            client.close();
            assertThat(held.isValid()).isFalse();
            assertThatThrownBy(() -> waiter.get(10, TimeUnit.SECONDS))
                    .as("a waiter of a closed client gets neither the lock nor an empty result")
                    .hasCauseInstanceOf(IllegalStateException.class).cause().hasMessageContaining("closed");
            assertThat(server.lockCount()).isZero();
        }
    }
}
