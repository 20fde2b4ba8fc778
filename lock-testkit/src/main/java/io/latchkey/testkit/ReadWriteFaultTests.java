package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The lock's faults on read-write locks: one reader's kill -9 frees its own grant only, the other
 * readers keep theirs and a waiting writer comes in once they close; a writer killed frees the lock for
 * readers within the lock's crash bound; a writer paused past its lease finds itself invalid when it
 * runs again; a reader cut off the network is lost before a writer is granted.
 */
abstract class ReadWriteFaultTests extends ReadWriteGroup {

    @Test
    @DisplayName("kill -9 of one reader in a child JVM: the other reader keeps its grant past the crash bound, and a waiting writer comes in once it closes")
    void killedReaderFreesOnlyItsOwn() throws Exception {
        String name = name();
        History history = new History();
        ChildHolder child = childHolder();
        History.Grant childGrant = childHolds(child, name, false, history);
        long asked = History.now();
        Lease reader = hold(client().readWriteLock(name).readLock());
        History.Grant readerGrant = record(history, "reader", false, reader, asked, History.now());

        DistributedLock writeLock = client().readWriteLock(name).writeLock();
        long writerAsked = History.now();
        Future<Optional<Lease>> writer = started(() -> writeLock.tryLock(patientWait().multipliedBy(2)));
        long killedAt = killHolder(child, history, name);
        Thread.sleep(crashBound().toMillis());
        assertThat(readerGrant.check(reader::isValid)).as("the surviving reader, a crash bound after the other's kill")
                .isTrue();
        assertThat(writer.isDone()).as("the writer, while a reader still holds").isFalse();

        reader.close();
        long closedAt = History.now();
        readerGrant.released(closedAt);
        Lease write = track(await(writer, tryBound(patientWait()), "the writer").orElseThrow(
                () -> new AssertionError("the writer was not granted " + name + " after the killed reader's grant"
                        + " expired and the other closed")));
        record(history, "writer", true, write, writerAsked, History.now());
        assertThat(write.fencingToken()).isGreaterThan(Math.max(childGrant.token(), readerGrant.token()));
        HistoryChecker.assertAvailableWithin(history, name, closedAt, wakeUpBound());
        assertThat(closedAt - killedAt).as("the reader closed after the crash bound").isPositive();
        HistoryChecker.assertModesRespected(history);
    }

    @Test
    @DisplayName("kill -9 of the writer in a child JVM: a waiting reader is granted within lease + wake-up + slack")
    void killedWriterFreesReaders() throws Exception {
        String name = name();
        History history = new History();
        ChildHolder child = childHolder();
        History.Grant childGrant = childHolds(child, name, true, history);
        DistributedLock readLock = client().readWriteLock(name).readLock();
        assertThat(readLock.tryLock()).as("a read while the child writes").isEmpty();
        long asked = History.now();
        Future<Optional<Lease>> reader = started(() -> readLock.tryLock(patientWait()));
        long killedAt = killHolder(child, history, name);
        Lease read = track(await(reader, tryBound(patientWait()), "the reader").orElseThrow(
                () -> new AssertionError("the reader was not granted " + name + " after the writer was killed")));
        record(history, "reader", false, read, asked, History.now());
        assertThat(read.fencingToken()).isGreaterThan(childGrant.token());
        HistoryChecker.assertAvailableWithin(history, name, killedAt, crashBound());
        HistoryChecker.assertModesRespected(history);
    }

    @Test
    @DisplayName("SIGSTOP of the writer in a child JVM past its lease: a reader is granted, and the writer finds its lease invalid when it runs again")
    void pausedWriterIsInvalidWhenItRuns() throws Exception {
        String name = name();
        History history = new History();
        ChildHolder child = childHolder();
        History.Grant childGrant = childHolds(child, name, true, history);
        DistributedLock readLock = client().readWriteLock(name).readLock();
        long asked = History.now();
        Future<Optional<Lease>> reader = started(() -> readLock.tryLock(patientWait()));
        long pausedAt = pauseHolder(child, history, name);
        Lease read = track(await(reader, tryBound(patientWait()), "the reader").orElseThrow(
                () -> new AssertionError("the reader was not granted " + name + " while the writer was paused")));
        History.Grant readGrant = record(history, "reader", false, read, asked, History.now());
        waitOutLease(pausedAt);
        ChildHolder.Reply check = resumeAndCheck(child, childGrant);
        assertThat(check.kind()).as("the paused writer's own check when it runs again").isEqualTo("invalid");
        readGrant.check(read::isValid);
        HistoryChecker.assertAvailableWithin(history, name, pausedAt, crashBound());
        HistoryChecker.assertModesRespected(history);
    }

    @Test
    @DisplayName("network cut of a reader: its lease is invalid and lost() complete no later than a waiting writer's grant")
    void cutReaderLostBeforeWriter() throws Exception {
        String name = name();
        History history = new History();
        CuttableClient cut = cuttableClient();
        long asked = History.now();
        Lease held = hold(cut.client().readWriteLock(name).readLock());
        History.Grant heldGrant = record(history, "cut-reader", false, held, asked, History.now());
        AtomicLong lostAt = new AtomicLong();
        held.lost().thenRun(() -> lostAt.set(History.now()));

        DistributedLock writeLock = client().readWriteLock(name).writeLock();
        long writerAsked = History.now();
        Future<Optional<Lease>> writer = started(() -> writeLock.tryLock(patientWait()));
        long cutAt = cutHolder(cut, history, name);
        Lease write = track(await(writer, tryBound(patientWait()), "the writer").orElseThrow(
                () -> new AssertionError("the writer was not granted " + name + " after the reader was cut off")));
        History.Grant written = record(history, "writer", true, write, writerAsked, History.now());
        boolean stillValid = held.isValid();
        heldGrant.check(() -> stillValid);
        assertThat(stillValid).as("the cut reader's lease right after the writer's grant").isFalse();
        assertThat(lostAt.get()).as("when the cut reader's lost() completed (0: not yet)").isNotZero();
        assertThat(lostAt.get() - grantedAt(history, written)).as("lost() relative to the writer's grant (ns)")
                .isLessThanOrEqualTo(0);
        HistoryChecker.assertAvailableWithin(history, name, cutAt, failoverBound());
        HistoryChecker.assertModesRespected(history);
        held.close();
        cut.restore();
    }
}
