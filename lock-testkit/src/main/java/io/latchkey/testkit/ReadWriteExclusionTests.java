package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Readers together and one writer, on a real server: readers of several clients and a child JVM hold
 * at once while a writer waits; a writer holds alone; a reader asking after a writer began to wait
 * waits behind it; a mixed load of readers and writers on several clients keeps the modes; the
 * reentrancy table of {@link io.latchkey.DistributedReadWriteLock} holds on the backend; and nothing
 * remains once every lease closed.
 */
abstract class ReadWriteExclusionTests extends ReadWriteGroup {

    /** Rounds of each thread of the mixed load. */
    static final int ROUNDS = 6;
    /** Threads of the mixed load, each on a client of its own. */
    static final int THREADS = 4;

    @Test
    @DisplayName("readers of three clients and a child JVM hold at once; a writer gets the lock only once all closed, then holds alone")
    void readersTogetherWriterAlone() throws Exception {
        String name = name();
        History history = new History();
        List<Lease> readers = new ArrayList<>();
        List<History.Grant> grants = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            long asked = History.now();
            Lease read = hold(client().readWriteLock(name).readLock());
            grants.add(record(history, "reader-" + i, false, read, asked, History.now()));
            readers.add(read);
        }
        ChildHolder child = childHolder();
        grants.add(childHolds(child, name, false, history));
        DistributedReadWriteLock writerSide = client().readWriteLock(name);
        assertThat(writerSide.writeLock().tryLock()).as("a write while four readers hold").isEmpty();
        for (int i = 0; i < readers.size(); i++) {
            Lease read = readers.get(i);
            assertThat(grants.get(i).check(read::isValid)).as("reader %d while the others hold", i).isTrue();
        }
        Future<Optional<Lease>> writer = started(() -> writerSide.writeLock().tryLock(patientWait()));
        for (int i = 0; i < readers.size(); i++) {
            readers.get(i).close();
            grants.get(i).released(History.now());
        }
        assertThat(writer.isDone()).as("the writer, while the child still reads").isFalse();
        ChildHolder.Reply released = child.request("release", tryBound(Duration.ZERO));
        assertThat(released.kind()).as("the child's release of its read").isEqualTo("released");
        long releasedAt = History.now();
        grants.get(3).released(releasedAt);
        Lease write = track(await(writer, tryBound(patientWait()), "the writer").orElseThrow(
                () -> new AssertionError("the writer was not granted " + name + " after every reader closed")));
        History.Grant written = record(history, "writer", true, write, releasedAt, History.now());
        assertThat(write.fencingToken()).as("the write's token against every earlier read's")
                .isGreaterThan(grants.stream().mapToLong(History.Grant::token).max().orElseThrow());

        LockClient other = client();
        assertThat(other.readWriteLock(name).readLock().tryLock()).as("a read while the writer holds").isEmpty();
        assertThat(other.readWriteLock(name).writeLock().tryLock()).as("a write while the writer holds").isEmpty();
        assertThat(written.check(write::isValid)).isTrue();
        write.close();
        written.released(History.now());
        HistoryChecker.assertModesRespected(history);
        Awaitility.await().atMost(failoverBound()).pollInterval(Duration.ofMillis(50))
                .untilAsserted(() -> contract().assertNothingLeftInBackend(List.of(name)));
    }

    @Test
    @DisplayName("a reader asking after a writer began to wait waits behind it, though only readers hold: writers are not starved")
    void writerNotStarved() throws Exception {
        String name = name();
        History history = new History();
        long asked = History.now();
        Lease first = hold(client().readWriteLock(name).readLock());
        History.Grant firstGrant = record(history, "first-reader", false, first, asked, History.now());

        DistributedLock writeLock = client().readWriteLock(name).writeLock();
        long writerAsked = History.now();
        Future<Optional<Lease>> writer = started(() -> writeLock.tryLock(patientWait()));
        // the writer's request is queued at the server once a read of another client is refused
        LockClient late = client();
        DistributedLock lateRead = late.readWriteLock(name).readLock();
        Awaitility.await().atMost(patientWait()).pollInterval(Duration.ofMillis(20)).until(() -> {
            Optional<Lease> probe = lateRead.tryLock();
            probe.ifPresent(Lease::close); // before the writer queued: let go and ask again
            return probe.isEmpty();
        });
        assertThat(lateRead.tryLock(lease())).as("a read asked while a writer waits, held back for a whole lease")
                .isEmpty();
        long lateAsked = History.now();
        Future<Optional<Lease>> lateReader = started(() -> lateRead.tryLock(patientWait()));

        first.close();
        long releasedAt = History.now();
        firstGrant.released(releasedAt);
        Lease write = track(await(writer, tryBound(patientWait()), "the writer").orElseThrow(
                () -> new AssertionError("the writer was not granted " + name + " once the reader closed")));
        History.Grant written = record(history, "writer", true, write, writerAsked, History.now());
        assertThat(lateReader.isDone()).as("the late reader while the writer holds").isFalse();
        Thread.sleep(wakeUpBound().toMillis());
        assertThat(written.check(write::isValid)).isTrue();
        write.close();
        written.released(History.now());
        Lease read = track(await(lateReader, tryBound(patientWait()), "the late reader").orElseThrow(
                () -> new AssertionError("the late reader was not granted " + name + " after the writer closed")));
        record(history, "late-reader", false, read, lateAsked, History.now());
        assertThat(read.fencingToken()).as("the late read's token against the write's").isGreaterThan(write.fencingToken());
        HistoryChecker.assertModesRespected(history);
    }

    @Test
    @DisplayName("a mixed load of readers and writers on " + THREADS + " clients: never a writer beside another holder, tokens in one sequence")
    void mixedLoad() throws Exception {
        String name = name();
        History history = new History();
        AtomicInteger writes = new AtomicInteger();
        AtomicInteger reads = new AtomicInteger();
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            LockClient client = client();
            String actor = "worker-" + t;
            long seed = ThreadLocalRandom.current().nextLong();
            workers.add(started(() -> {
                java.util.Random random = new java.util.Random(seed);
                for (int round = 0; round < ROUNDS; round++) {
                    boolean write = random.nextInt(3) == 0;
                    DistributedLock mode = write ? client.readWriteLock(name).writeLock() : client.readWriteLock(name).readLock();
                    long asked = History.now();
                    Optional<Lease> got = mode.tryLock(patientWait());
                    if (got.isEmpty()) {
                        throw new AssertionError(actor + " was not granted " + mode + " within " + patientWait()
                                + " (seed " + seed + ")");
                    }
                    try (Lease lease = got.get()) {
                        History.Grant grant = record(history, actor, write, lease, asked, History.now());
                        Thread.sleep(random.nextInt(30));
                        grant.check(lease::isValid);
                        (write ? writes : reads).incrementAndGet();
                    }
                }
                return null;
            }));
        }
        for (Future<?> w : workers) {
            await(w, tryBound(patientWait()).multipliedBy(ROUNDS * THREADS), "a worker of the mixed load");
        }
        assertThat(writes.get() + reads.get()).isEqualTo(ROUNDS * THREADS);
        HistoryChecker.assertModesRespected(history);
    }

    @Test
    @DisplayName("reentrancy on the backend: read in read and write in write nest, a read in a write shares its grant, downgrade keeps exclusion, a write asked while reading is refused")
    void reentrancyTable() throws Exception {
        String name = name();
        LockClient mine = client();
        LockClient other = client();
        DistributedReadWriteLock rw = mine.readWriteLock(name);
        try (Lease read = hold(rw.readLock()); Lease again = hold(rw.readLock())) {
            assertThat(again.fencingToken()).as("a nested read's token").isEqualTo(read.fencingToken());
            assertThat(rw.readLock().holdCount()).isEqualTo(2);
            assertThatThrownBy(() -> rw.writeLock().tryLock(patientWait())).as("a write asked while reading")
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("read lock '" + name + "'")
                    .hasMessageContaining("its own read lease");
            assertThat(read.isValid()).isTrue();
        }
        Lease write = hold(rw.writeLock());
        try (Lease nested = hold(rw.writeLock())) {
            assertThat(nested.fencingToken()).isEqualTo(write.fencingToken());
        }
        Lease read = hold(rw.readLock());
        assertThat(read.fencingToken()).as("a read in a write shares its grant").isEqualTo(write.fencingToken());
        write.close(); // downgrade
        assertThat(read.isValid()).as("the read after the write closed").isTrue();
        assertThat(rw.readLock().isHeldByCurrentThread()).isTrue();
        assertThat(rw.writeLock().isHeldByCurrentThread()).isFalse();
        assertThat(other.readWriteLock(name).readLock().tryLock())
                .as("another client's read while the downgraded read holds the write grant").isEmpty();
        read.close();
        try (Lease otherRead = hold(other.readWriteLock(name).readLock())) {
            assertThat(otherRead.fencingToken()).isGreaterThan(write.fencingToken());
        }
        Awaitility.await().atMost(failoverBound()).pollInterval(Duration.ofMillis(50))
                .untilAsserted(() -> contract().assertNothingLeftInBackend(List.of(name)));
    }
}
