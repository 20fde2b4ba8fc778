package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockException;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rules 1, 7 and 8 in modes across a restart of the server: readers holding and a writer waiting while
 * the server restarts; never a writer's valid lease beside another, tokens still in one sequence, and
 * the read-write lock usable afterwards.
 */
abstract class ReadWriteRestartTests extends ReadWriteGroup {

    static final int READERS = 2;

    @Test
    @DisplayName("server restart while readers hold and a writer waits: never a writer beside another holder, and usable afterwards")
    void restartWhileReadAndWriterWaits() throws Exception {
        String name = name();
        History history = new History();
        List<Lease> readers = new ArrayList<>();
        List<History.Grant> grants = new ArrayList<>();
        for (int i = 0; i < READERS; i++) {
            long asked = History.now();
            Lease read = hold(client().readWriteLock(name).readLock());
            readers.add(read);
            grants.add(record(history, "reader-" + i, false, read, asked, History.now()));
        }
        DistributedLock writeLock = client().readWriteLock(name).writeLock();
        Future<History.Grant> writer = started(() -> {
            // the grant is bounded from the readers' release below, not from this wait
            Attempt<Lease> attempt = acquireAcrossRestart(() -> writeLock.tryLock(ACROSS_RESTART));
            Lease write = track(attempt.got().orElseThrow(
                    () -> new AssertionError("the writer was not granted " + name + " within " + ACROSS_RESTART)));
            History.Grant grant = record(history, "writer", true, write, attempt.requestedAt(), History.now());
            grant.check(write::isValid);
            write.close();
            grant.released(History.now());
            return grant;
        });
        // gives the writer's request time to reach the server before it goes down
        Thread.sleep(options().safetyMargin().toMillis());

        AtomicBoolean stop = new AtomicBoolean();
        List<Future<?>> watchers = new ArrayList<>();
        for (int i = 0; i < READERS; i++) {
            watchers.add(watchValidity(grants.get(i), readers.get(i)::isValid, stop));
        }
        restartServer(history, name);
        // the readers keep their grants (if the backend kept them) for a full lease after the restart
        Thread.sleep(lease().toMillis());
        stop.set(true);
        for (Future<?> w : watchers) {
            await(w, tryBound(Duration.ZERO), "a validity watcher");
        }
        long releasedAt = History.now();
        for (int i = 0; i < READERS; i++) {
            try {
                readers.get(i).close();
            } catch (LockException e) {
                // the release may not reach a server that forgot the grant; it expires on its own
            }
            grants.get(i).released(History.now());
        }
        History.Grant written = await(writer, tryBound(failoverBound().multipliedBy(2)), "the writer");
        assertThat(written.token()).as("the write's token against the readers' before the restart")
                .isGreaterThan(grants.stream().mapToLong(History.Grant::token).max().orElseThrow());

        long asked = History.now();
        Optional<Lease> read = client().readWriteLock(name).readLock().tryLock(failoverBound());
        assertThat(read).as("a read after the restart and the writer's release").isPresent();
        track(read.get());
        History.Grant last = record(history, "after-restart", false, read.get(), asked, History.now());
        assertThat(last.token()).isGreaterThan(written.token());
        HistoryChecker.assertModesRespected(history);
        HistoryChecker.assertAvailableWithin(history, name, releasedAt, failoverBound());
    }
}
