package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockState;
import io.latchkey.ReadWriteState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Future;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Inspection of a read-write lock ({@link DistributedReadWriteLock#inspect()}): another client reads
 * each reader's grant and the writer's, with the holder, token and grant time the granting client
 * wrote; a writer that waits behind readers holds nothing and is not shown; and inspecting a name
 * nobody holds leaves nothing in the backend.
 */
@Tag("inspection") // a backend's author runs this group alone with -Dgroups=inspection
abstract class ReadWriteInspectionTests extends ReadWriteGroup {

    @Test
    @DisplayName("another client reads two readers' owners, threads, tokens and grant times and no writer, not the"
            + " writer that waits behind them; then the writer alone once granted with its token; free after the"
            + " release, and nothing left in the backend")
    void readersThenTheWriter() throws Exception {
        String name = name();
        LockClient observer = client();
        DistributedReadWriteLock seen = observer.readWriteLock(name);
        assertThat(seen.inspect()).as("before any grant").isEqualTo(ReadWriteState.free(name));

        Instant before = Instant.now();
        Lease a = hold(clientOwnedBy("reader-a").readWriteLock(name).readLock());
        Lease b = hold(clientOwnedBy("reader-b").readWriteLock(name).readLock());
        Instant after = Instant.now();
        ReadWriteState read = seen.inspect();
        assertThat(read.writerState()).as("the writer while readers hold: %s", read).isEmpty();
        assertThat(read.readers()).as("the readers: %s", read).hasSize(2);
        for (Lease reader : List.of(a, b)) {
            String owner = reader == a ? "reader-a" : "reader-b";
            LockState state = read.readers().stream().filter(r -> r.holder().map(Holder::owner).orElse("").equals(owner))
                    .findFirst().orElseThrow(() -> new AssertionError("no reader owned by " + owner + " in " + read));
            assertGrant(state, owner, Thread.currentThread().getName(), reader, before, after);
        }

        DistributedLock writeLock = clientOwnedBy("writer").readWriteLock(name).writeLock();
        Instant writerAsked = Instant.now();
        Future<Optional<Lease>> writer = started(() -> writeLock.tryLock(patientWait()));
        Thread.sleep(timeout().toMillis()); // the writer queues meanwhile, where the backend keeps a queue
        assertThat(seen.inspect().writerState()).as("a writer waiting behind readers holds nothing").isEmpty();
        assertThat(seen.inspect().readers()).as("the readers while a writer waits").hasSize(2);

        a.close();
        b.close();
        Lease write = track(await(writer, tryBound(patientWait()), "the writer").orElseThrow(
                () -> new AssertionError("the writer was not granted " + name + " once the readers closed")));
        Instant granted = Instant.now();
        // a reader's release may take the backend's round trip to show: the writer holds alone by then
        ReadWriteState written = seen.inspect();
        assertThat(written.readers()).as("readers beside the writer: %s", written).isEmpty();
        LockState writerState = written.writerState().orElseThrow(() -> new AssertionError("no writer in " + written));
        assertGrant(writerState, "writer", null, write, writerAsked, granted);

        write.close();
        Awaitility.await("free after the writer's release").atMost(tryBound(Duration.ZERO))
                .pollInterval(Duration.ofMillis(20)).until(() -> !seen.inspect().isHeld());
        observer.close();
        contract().assertNothingLeftInBackend(List.of(name));
    }

    /** {@code state} is {@code owner}'s grant of {@code lease}, by {@code thread} (any, if null), made between the two moments. */
    private void assertGrant(LockState state, String owner, String thread, Lease lease, Instant from, Instant to) {
        Holder holder = state.holder().orElseThrow(() -> new AssertionError("no holder in " + state));
        assertThat(holder.owner()).as("the owner in %s", state).isEqualTo(owner);
        assertThat(holder.thread()).as("the thread that acquired, in %s", state).isNotEmpty();
        if (thread != null) {
            assertThat(holder.thread()).as("the thread that acquired, in %s", state).isEqualTo(thread);
        }
        assertThat(state.token()).as("the token in %s", state).hasValue(lease.fencingToken());
        state.expiresIn().ifPresent(left -> assertThat(left).as("the time left in %s", state).isPositive()
                .isLessThanOrEqualTo(lease()));
        assertWithinClocks(state.since().orElseThrow(() -> new AssertionError("no grant time in " + state)), from, to,
                "a grant of " + owner);
    }
}
