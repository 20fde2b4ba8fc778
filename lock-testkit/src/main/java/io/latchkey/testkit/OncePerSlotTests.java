package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockRequest;
import io.latchkey.LockResult;
import io.latchkey.LockResult.Outcome;
import io.latchkey.testkit.fault.CuttableClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Once per schedule slot: {@code runLocked}/{@code callLocked} with a
 * {@link LockRequest#slot() slot} run the task at most once per slot across every client of the lock,
 * without relying on synchronized clocks: the holder records the last completed slot with the lock in
 * the backend, only with a valid lease and guarded by its fencing token.
 *
 * <p>The slots are fixed instants (the names of runs, as a cron job's fire times are), never readings
 * of a clock; each test uses its own lock names, so no earlier record interferes. Tagged
 * {@code once-per-slot}: {@code -Dtest=<contract test> -Dgroups=once-per-slot} runs this group alone.
 */
@Tag("once-per-slot")
abstract class OncePerSlotTests extends ContractGroup {

    /** A midnight fire time, as a nightly cron job's slot. */
    static final Instant MIDNIGHT = Instant.parse("2030-01-01T00:00:00Z");

    @Test
    @DisplayName("two clients firing the same slot at once: the task runs once, the other is told the slot is done")
    void twoClientsAtOnceRunOnce() throws Exception {
        assertRunsOnce(2, Duration.ZERO);
    }

    @Test
    @DisplayName("four clients firing the same slot up to several seconds apart (past the lease): the task runs once")
    void fourClientsSecondsApartRunOnce() throws Exception {
        // a quarter of the lease apart, so the last fires after the first's lease would have run out:
        // the task (a few milliseconds) is long over, and only the record keeps the slot done
        assertRunsOnce(4, lease().dividedBy(4));
    }

    @Test
    @DisplayName("a later slot runs again; an earlier slot, or the same one, is skipped with the recorded slot")
    void laterSlotRunsEarlierIsSkipped() throws Exception {
        String name = name();
        LockClient a = client();
        LockClient b = client();
        Instant nextNight = MIDNIGHT.plus(Duration.ofDays(1));

        assertThat(run(a, name, MIDNIGHT).outcome()).as("the first run of the midnight slot").isEqualTo(Outcome.RAN);
        assertThat(run(b, name, nextNight).outcome()).as("the next night's slot").isEqualTo(Outcome.RAN);

        LockResult<Integer> earlier = run(a, name, MIDNIGHT.plus(Duration.ofHours(12)));
        assertThat(earlier.outcome()).as("a slot between the two, earlier than the recorded one").isEqualTo(Outcome.SLOT_DONE);
        assertThat(earlier.recordedSlot()).contains(nextNight);
        assertThat(earlier.ran()).isFalse();
        LockResult<Integer> same = run(b, name, nextNight);
        assertThat(same.outcome()).as("the recorded slot again").isEqualTo(Outcome.SLOT_DONE);
        assertThat(same.recordedSlot()).contains(nextNight);
        assertThat(client().lock(name).tryLock(tryBound(Duration.ZERO))).as("the lock after a skipped slot").isPresent()
                .get().satisfies(this::track);
    }

    @Test
    @DisplayName("a task that throws does not mark its slot (another client runs it); with markSlotOnFailure it does")
    void failedTaskDoesNotMarkItsSlot() throws Exception {
        String name = name();
        LockClient a = client();
        LockClient b = client();
        LockRequest midnight = LockRequest.builder().wait(patientWait()).slot(MIDNIGHT).build();

        LockResult<Void> failed = a.lock(name).runLocked(midnight, lease -> {
            throw new IllegalStateException("the nightly job failed");
        });
        assertThat(failed.outcome()).isEqualTo(Outcome.FAILED);
        assertThat(failed.exception()).get().isInstanceOf(IllegalStateException.class);
        AtomicInteger runs = new AtomicInteger();
        assertThat(b.lock(name).runLocked(midnight, lease -> runs.incrementAndGet()).outcome())
                .as("the same slot on another client after a failed run").isEqualTo(Outcome.RAN);
        assertThat(runs).hasValue(1);

        Instant nextNight = MIDNIGHT.plus(Duration.ofDays(1));
        LockRequest marking = midnight.toBuilder().slot(nextNight).markSlotOnFailure(true).build();
        assertThat(a.lock(name).runLocked(marking, lease -> {
            throw new IllegalStateException("the nightly job failed");
        }).outcome()).isEqualTo(Outcome.FAILED);
        LockResult<Void> skipped = b.lock(name).runLocked(midnight.toBuilder().slot(nextNight).build(), lease -> runs.incrementAndGet());
        assertThat(skipped.outcome()).as("a slot whose failed run was marked (markSlotOnFailure)").isEqualTo(Outcome.SLOT_DONE);
        assertThat(runs).hasValue(1);
    }

    @Test
    @DisplayName("a holder cut off while marking its slot, past its lease, does not mark it: the next holder's record stands")
    void holderCutWhileMarkingDoesNotMark() throws Exception {
        String name = name();
        CuttableClient cut = cuttableClient();
        LockClient other = client();
        Instant late = MIDNIGHT.plus(Duration.ofHours(1));
        CountDownLatch running = new CountDownLatch(1);
        // The task cuts its own client as its last act: the shared layer finds the lease still valid and
        // sends the mark, which waits in the cut until another holder has the lock and its own record.
        Future<LockResult<Void>> holder = executor().submit(() -> cut.client().lock(name).runLocked(
                LockRequest.builder().wait(patientWait()).slot(late).interruptOnLoss(false).build(), lease -> {
                    running.countDown();
                    cut.cut();
                }));
        long until = System.nanoTime() + tryBound(patientWait()).toNanos();
        while (!running.await(10, TimeUnit.MILLISECONDS)) {
            if (holder.isDone()) {
                throw new AssertionError("the cut holder's runLocked ended before its task ran: " + await(holder,
                        Duration.ZERO, "the cut holder's runLocked"));
            }
            assertThat(System.nanoTime() - until).as("the holder's task ran within %s", tryBound(patientWait())).isNegative();
        }

        LockResult<Void> next = other.lock(name).runLocked(
                LockRequest.builder().wait(patientWait()).slot(MIDNIGHT).build(), lease -> { });
        assertThat(next.outcome()).as("an earlier slot on another client, once the cut holder's lease ended")
                .isEqualTo(Outcome.RAN);
        cut.restore(); // delivers the held-back mark, now from a holder that no longer holds the lock

        LockResult<Void> outcome = null;
        try {
            outcome = await(holder, tryBound(patientWait()), "the cut holder's runLocked");
        } catch (LockException e) {
            // the mark could not reach the server in time: also not a completed slot
        }
        if (outcome != null) {
            assertThat(outcome.outcome()).as("the cut holder's result: %s", outcome).isEqualTo(Outcome.LOST);
            assertThat(outcome.ran()).isTrue();
        }
        // one more round trip through the restored path, so that the held-back mark has reached the server
        assertThat(cut.client().lock(name("drain")).tryLock(patientWait())).isPresent().get().satisfies(this::track);

        LockResult<Integer> check = run(client(), name, MIDNIGHT);
        assertThat(check.outcome()).as("the midnight slot after the late mark was delivered").isEqualTo(Outcome.SLOT_DONE);
        assertThat(check.recordedSlot()).as("the recorded slot: the next holder's, not the cut holder's late one")
                .contains(MIDNIGHT);
    }

    /** {@code clients} clients fire {@link #MIDNIGHT}, {@code apart} after each other; the task runs once. */
    private void assertRunsOnce(int clients, Duration apart) throws Exception {
        String name = name();
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch ready = new CountDownLatch(clients);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<LockResult<Integer>>> results = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            LockClient client = client();
            Duration delay = apart.multipliedBy(i);
            results.add(executor().submit(() -> {
                ready.countDown();
                go.await();
                Thread.sleep(delay.toMillis()); // the schedule: this node's cron fires later
                return client.lock(name).callLocked(LockRequest.builder().wait(patientWait()).slot(MIDNIGHT).build(),
                        lease -> runs.incrementAndGet());
            }));
        }
        ready.await();
        go.countDown();
        int ran = 0;
        for (Future<LockResult<Integer>> f : results) {
            LockResult<Integer> r = await(f, apart.multipliedBy(clients).plus(tryBound(patientWait()).multipliedBy(clients)),
                    "a client firing the slot");
            if (r.outcome() == Outcome.RAN) {
                ran++;
            } else {
                assertThat(r.outcome()).as("a client that did not run the slot: %s", r).isEqualTo(Outcome.SLOT_DONE);
                assertThat(r.recordedSlot()).contains(MIDNIGHT);
                assertThat(r.ran()).isFalse();
            }
        }
        assertThat(ran).as("clients that report they ran the slot").isEqualTo(1);
        assertThat(runs).as("times the task ran").hasValue(1);
    }

    private LockResult<Integer> run(LockClient client, String name, Instant slot) throws InterruptedException {
        return client.lock(name).callLocked(LockRequest.builder().wait(patientWait()).slot(slot).build(), lease -> 1);
    }
}
