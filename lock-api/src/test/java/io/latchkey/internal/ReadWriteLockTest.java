package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.Lease;
import io.latchkey.LockListener;
import io.latchkey.LockListener.Target;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.LockBackend;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Read-write locks in the shared layer, on the in-memory backend: sharing, writers first, the reentrancy table, tokens, loss, events. */
class ReadWriteLockTest extends InMemoryFixture {

    /** Long enough for any step of these tests on a loaded machine; never reached when they pass. */
    private static final Duration PATIENT = LEASE.multipliedBy(10);

    @Test
    @DisplayName("readers of several clients and threads hold at once, each its own grant; a writer waits for all of them")
    void readersShareWritersExclude() throws Exception {
        SharedLockClient one = newClient();
        SharedLockClient two = newClient();
        SharedLockClient writer = newClient();
        Lease first = one.readWriteLock("dim").readLock().lock(Duration.ZERO);
        Lease second = threads.submit(() -> one.readWriteLock("dim").readLock().lock(Duration.ZERO)).get();
        Lease third = two.readWriteLock("dim").readLock().lock(Duration.ZERO);
        assertThat(server.readers("dim")).as("one grant per reading thread and client").isEqualTo(3);
        assertThat(writer.readWriteLock("dim").writeLock().tryLock()).isEmpty();
        assertThat(one.readWriteLock("dim").readLock().isHeldByThisClient()).isTrue();
        first.close();
        second.close();
        assertThat(one.readWriteLock("dim").readLock().isHeldByThisClient()).isFalse();
        assertThat(writer.readWriteLock("dim").writeLock().tryLock()).as("the third reader still holds").isEmpty();
        third.close();
        try (Lease write = writer.readWriteLock("dim").writeLock().lock(Duration.ZERO)) {
            assertThat(server.writing("dim")).isTrue();
            assertThat(one.readWriteLock("dim").readLock().tryLock()).isEmpty();
            assertThat(one.readWriteLock("dim").writeLock().tryLock()).isEmpty();
            assertThat(write.isValid()).isTrue();
        }
        assertThat(server.writing("dim")).isFalse();
    }

    @Test
    @DisplayName("a reader arriving after a waiting writer waits behind it: readers never starve a writer")
    void writerNotStarved() throws Exception {
        SharedLockClient reader = newClient();
        SharedLockClient writer = newClient();
        SharedLockClient late = newClient();
        Lease holding = reader.readWriteLock("dim").readLock().lock(Duration.ZERO);
        Future<Lease> write = threads.submit(() -> writer.readWriteLock("dim").writeLock().lock(PATIENT));
        awaitWritersWaiting("dim", 1);
        assertThat(late.readWriteLock("dim").readLock().tryLock(LEASE))
                .as("a read asked while a writer waits, though only readers hold").isEmpty();
        Future<Lease> lateRead = threads.submit(() -> late.readWriteLock("dim").readLock().lock(PATIENT));
        holding.close();
        Lease written = write.get(PATIENT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lateRead.isDone()).as("the late reader waits while the writer holds").isFalse();
        long writeToken = written.fencingToken();
        written.close();
        try (Lease read = lateRead.get(PATIENT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(read.fencingToken()).as("a read's token is above the earlier write's").isGreaterThan(writeToken);
        }
    }

    @Test
    @DisplayName("reentrancy: read in read and write in write nest; read in write nests in the write grant; downgrade keeps exclusion")
    void reentrancyTable() throws Exception {
        SharedLockClient mine = newClient();
        SharedLockClient other = newClient();
        DistributedReadWriteLock rw = mine.readWriteLock("dim");
        try (Lease read = rw.readLock().lock(Duration.ZERO); Lease again = rw.readLock().lock(Duration.ZERO)) {
            assertThat(rw.readLock().holdCount()).isEqualTo(2);
            assertThat(again.fencingToken()).isEqualTo(read.fencingToken());
            assertThat(server.readers("dim")).as("a nested read is no second grant").isEqualTo(1);
            assertThat(rw.writeLock().holdCount()).isZero();
        }
        Lease write = rw.writeLock().lock(Duration.ZERO);
        try (Lease nestedWrite = rw.writeLock().lock(Duration.ZERO)) {
            assertThat(rw.writeLock().holdCount()).isEqualTo(2);
            assertThat(nestedWrite.fencingToken()).isEqualTo(write.fencingToken());
        }
        Lease read = rw.readLock().lock(Duration.ZERO);
        assertThat(read.fencingToken()).as("a read in a write shares its grant").isEqualTo(write.fencingToken());
        assertThat(server.readers("dim")).isZero();
        assertThat(rw.readLock().holdCount()).isEqualTo(1);
        assertThat(rw.writeLock().holdCount()).isEqualTo(1);
        assertThat(rw.readLock().isHeldByCurrentThread()).isTrue();
        write.close(); // downgrade
        assertThat(rw.writeLock().isHeldByCurrentThread()).isFalse();
        assertThat(rw.writeLock().isHeldByThisClient()).isFalse();
        assertThat(rw.readLock().isHeldByCurrentThread()).isTrue();
        assertThat(read.isValid()).isTrue();
        assertThat(other.readWriteLock("dim").writeLock().tryLock()).isEmpty();
        assertThat(other.readWriteLock("dim").readLock().tryLock())
                .as("the downgraded read keeps the write grant until it closes").isEmpty();
        read.close();
        assertThat(server.writing("dim")).isFalse();

        try (Lease onlyRead = rw.readLock().lock(Duration.ZERO)) {
            assertThatThrownBy(() -> rw.writeLock().tryLock(PATIENT)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("read lock 'dim'").hasMessageContaining("its own read lease")
                    .hasMessageContaining("close the read lease first");
            assertThat(onlyRead.isValid()).isTrue();
            assertThat(threads.submit(() -> mine.readWriteLock("dim").writeLock().tryLock()).get())
                    .as("another thread of the same client is a writer like any other: it waits for the reader").isEmpty();
        }
        try (Lease w = rw.writeLock().lock(Duration.ZERO)) {
            assertThat(w.isValid()).isTrue();
        }
    }

    @Test
    @DisplayName("one token sequence: each write above every earlier grant, each read above every earlier write")
    void oneTokenSequence() throws Exception {
        SharedLockClient client = newClient();
        DistributedReadWriteLock rw = client.readWriteLock("dim");
        long last = 0;
        for (int i = 0; i < 3; i++) {
            long r1;
            long r2;
            try (Lease a = rw.readLock().lock(Duration.ZERO);
                    Lease b = threads.submit(() -> rw.readLock().lock(Duration.ZERO)).get()) {
                r1 = a.fencingToken();
                r2 = b.fencingToken();
                b.close();
            }
            assertThat(r1).isGreaterThan(last);
            assertThat(r2).isGreaterThan(last);
            try (Lease w = rw.writeLock().lock(Duration.ZERO)) {
                assertThat(w.fencingToken()).isGreaterThan(Math.max(r1, r2));
                last = w.fencingToken();
            }
        }
    }

    @Test
    @DisplayName("asynchronous reads are readers of their own; the loss of a grant is signalled and ends its validity")
    void asyncAndLoss() throws Exception {
        SharedLockClient client = newClient();
        DistributedLock read = client.readWriteLock("dim").readLock();
        CompletableFuture<Optional<Lease>> a = read.tryLockAsync(Duration.ZERO);
        CompletableFuture<Optional<Lease>> b = read.tryLockAsync(Duration.ZERO);
        Lease la = a.get(PATIENT.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
        Lease lb = b.get(PATIENT.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
        assertThat(server.readers("dim")).isEqualTo(2);
        assertThat(read.holdCount()).as("asynchronous leases belong to no thread").isZero();
        assertThat(read.isHeldByThisClient()).isTrue();
        backends.get(0).signalModeLoss("dim", "test: session gone");
        assertThat(la.lost().toCompletableFuture().get(PATIENT.toMillis(), TimeUnit.MILLISECONDS).getMessage())
                .contains("read lock 'dim'");
        assertThat(lb.lost().toCompletableFuture().get(PATIENT.toMillis(), TimeUnit.MILLISECONDS)).isNotNull();
        assertThat(la.isValid()).isFalse();
        la.close();
        lb.close();
        CompletableFuture<Optional<Lease>> w = client.readWriteLock("dim").writeLock().tryLockAsync(PATIENT);
        try (Lease lw = w.get(PATIENT.toMillis(), TimeUnit.MILLISECONDS).orElseThrow()) {
            assertThat(lw.isValid()).isTrue();
            assertThat(client.readWriteLock("dim").writeLock().isHeldByThisClient()).isTrue();
        }
    }

    @Test
    @DisplayName("events name the mode; a read-write lock is independent of the lock of the same name; nothing stays tracked")
    void eventsIndependenceNothingLeft() throws Exception {
        SharedLockClient client = newClient();
        List<String> seen = new CopyOnWriteArrayList<>();
        client.addListener(new LockListener() {
            @Override
            public void acquired(Target target, Duration waitTime, long fencingToken) {
                seen.add(target.kind() + " " + target);
            }
        });
        try (Lease lock = client.lock("dim").lock(Duration.ZERO);
                Lease write = client.readWriteLock("dim").writeLock().lock(Duration.ZERO)) {
            assertThat(lock.isValid() && write.isValid()).isTrue();
            assertThat(write.toString()).contains("write lock 'dim'");
        }
        try (Lease read = client.readWriteLock("dim").readLock().lock(Duration.ZERO)) {
            assertThat(read.isValid()).isTrue();
        }
        until(() -> seen.size() == 3);
        assertThat(seen).containsExactly("LOCK lock 'dim'", "WRITE write lock 'dim'", "READ read lock 'dim'");
        assertThat(client.trackedNames()).isZero();
        assertThat(server.readWriteCount()).isZero();
        assertThat(client.readWriteLock("dim").readLock()).isEqualTo(client.readWriteLock("dim").readLock())
                .isNotEqualTo(client.readWriteLock("dim").writeLock()).isNotEqualTo(client.lock("dim"));
    }

    @Test
    @DisplayName("a task under a read or write lease runs, but a schedule slot is refused: slots are recorded with a lock")
    void tasksRunButSlotsAreTheLocks() throws Exception {
        SharedLockClient client = newClient();
        io.latchkey.LockResult<String> ran = client.readWriteLock("dim").readLock().callLocked(Duration.ZERO,
                lease -> lease.lockName() + " " + lease.isValid());
        assertThat(ran.value()).isEqualTo("dim true");
        io.latchkey.LockRequest slotted = io.latchkey.LockRequest.builder().slot(java.time.Instant.parse("2026-12-03T00:00:00Z"))
                .build();
        assertThatThrownBy(() -> client.readWriteLock("dim").writeLock().callLocked(slotted, lease -> "ran"))
                .isInstanceOf(io.latchkey.LockException.class).hasMessageContaining("write lock 'dim'")
                .hasMessageContaining("memory read-write lock 'dim'").hasMessageContaining("recorded with a lock");
        assertThat(server.writing("dim")).isFalse();
    }

    @Test
    @DisplayName("a backend without read-write locks is refused at readWriteLock(), naming it and the reason; bad names too")
    void refusals() {
        LockBackend locksOnly = locksOnlyBackend("test: this backend keeps one holder per name");
        SharedLockClient client = new SharedLockClient("locks-only", locksOnly, OPTIONS);
        clients.add(client);
        assertThatThrownBy(() -> client.readWriteLock("dim")).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("locks-only backend offers no read-write locks")
                .hasMessageContaining("'dim'").hasMessageContaining("one holder per name");
        assertThatThrownBy(() -> newClient().readWriteLock("bad\nname")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control character");
    }

    private void awaitWritersWaiting(String name, int writers) throws InterruptedException {
        until(() -> server.writersWaiting(name) == writers);
    }

    /** Polls {@code condition} until it holds, failing after {@link #PATIENT}. */
    private static void until(java.util.function.BooleanSupplier condition) throws InterruptedException {
        Deadline deadline = Deadline.after(PATIENT);
        while (!condition.getAsBoolean()) {
            assertThat(deadline.remainingNanos()).as("condition within %s", PATIENT).isPositive();
            Thread.sleep(10);
        }
    }
}
