package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockLostException;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.history.FencedResource;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rule 7: if the backend may have given the lock to someone else, the lease is invalid and
 * {@code lost()} has completed no later than the moment another holder is granted the lock; a paused
 * holder finds out before it writes, and the fenced resource rejects what it writes anyway.
 */
abstract class LossSignalTests extends ContractGroup {

    @Test
    @DisplayName("network cut of one holder: its lease is invalid and lost() complete no later than another client's grant")
    void cutHolderLosesLeaseBeforeAnotherIsGranted() throws Exception {
        String name = name();
        History history = new History();
        FencedResource resource = new FencedResource(name);
        CuttableClient cut = cuttableClient();
        Held holder = hold(cut.client().lock(name), history, "cut-client");
        Lease lease = holder.lease();
        History.Grant held = holder.grant();
        AtomicLong lostAt = new AtomicLong();
        lease.lost().thenRun(() -> lostAt.set(History.now()));
        assertThat(resource.write(held)).isTrue();

        DistributedLock contender = client().lock(name);
        AtomicBoolean contenderGranted = new AtomicBoolean();
        Future<History.Grant> next = started(() -> {
            long requested = History.now();
            Lease l = track(contender.tryLock(patientWait()).orElseThrow(
                    () -> new AssertionError("the contender was not granted the lock within " + patientWait())));
            long grantedAt = History.now();
            contenderGranted.set(true);
            History.Grant g = history.acquired("contender", name, l.fencingToken(), requested, grantedAt);
            g.check(l::isValid);
            return g;
        });
        Future<?> watcher = watchValidity(held, lease::isValid, contenderGranted);

        StderrLines log = track(StderrLines.capture());
        long cutAt = cutHolder(cut, history, name);

        History.Grant granted = await(next, tryBound(patientWait()), "the contender");
        long checkedAt = History.now();
        boolean stillValid = lease.isValid();
        await(watcher, tryBound(Duration.ZERO), "the validity watcher");

        assertThat(stillValid).as("the cut holder's lease right after the contender's grant").isFalse();
        assertThat(lostAt.get()).as("when lost() completed (0: not yet at %d)", checkedAt).isNotZero();
        assertThat(lostAt.get() - grantedAt(history, granted))
                .as("lost() completion relative to the contender's grant (ns)").isLessThanOrEqualTo(0);
        assertThatThrownBy(lease::ensureValid).isInstanceOf(LockLostException.class).hasMessageContaining(name);
        assertThat(resource.write(granted)).as("the new holder's write").isTrue();
        assertThat(resource.write(held)).as("a write by the cut holder after the new grant").isFalse();
        HistoryChecker.assertAvailableWithin(history, name, cutAt, failoverBound());
        HistoryChecker.assertConsistent(history);
        // README: a lease lost is one WARN line with the lock's name and the reason (logged right after lost())
        assertThat(log.await(tryBound(Duration.ZERO), l -> l.contains("'" + name + "'") && l.contains(" lost: ")))
                .as("log lines of the loss of '%s'", name).isNotEmpty().first().asString().contains("WARN");

        assertThatThrownBy(() -> cut.client().lock(name).tryLock())
                .as("a nested acquire by the thread that holds the lost lease").isInstanceOf(LockLostException.class);
        // closing a lost lease is harmless, even while the backend cannot be reached: no exception, in bound
        long closing = System.nanoTime();
        assertThatCode(lease::close).as("closing the lost lease while the network is still cut")
                .doesNotThrowAnyException();
        assertThat(Duration.ofNanos(System.nanoTime() - closing)).as("time to close the lost lease while cut")
                .isLessThanOrEqualTo(tryBound(Duration.ZERO));
        cut.restore();
        // once the network heals the cut client's late release must not take the new holder's lock
        Thread.sleep(slack().toMillis());
        assertThat(client().lock(name).tryLock()).as("the lock after the cut holder closed its lost lease").isEmpty();
    }

    @Test
    @DisplayName("pause (SIGSTOP) of a holder longer than the lease: after SIGCONT it finds its lease invalid"
            + " before it writes, and the fenced resource rejects its write")
    void pausedHolderFindsLeaseInvalidAndIsFenced() throws Exception {
        String name = name();
        History history = new History();
        FencedResource resource = new FencedResource(name);
        ChildHolder child = childHolder();
        String actor = "child-" + child.pid();
        ChildHolder.Reply got = child.acquire(name, patientWait(), tryBound(patientWait()));
        assertThat(got.kind()).as("the child's answer to acquire: " + got).isEqualTo("acquired");
        History.Grant childGrant = history.acquired(actor, name, Long.parseLong(got.argument()), got.sentAt(),
                got.receivedAt());
        checkThenWrite(child, childGrant, resource);

        long pausedAt = pauseHolder(child, history, name);
        Held next = hold(client().lock(name), history, "contender");
        Lease contender = next.lease();
        assertThat(resource.write(next.grant())).as("the new holder's write").isTrue();
        waitOutLease(pausedAt);

        ChildHolder.Reply check = resumeAndCheck(child, childGrant);
        ChildHolder.Reply write = child.next(tryBound(Duration.ZERO));
        assertThat(write.kind()).as("the child's write attempt: " + write).isEqualTo("write");
        boolean accepted = resource.write(childGrant);

        assertThat(check.kind()).as("the resumed holder's check of its lease").isEqualTo("invalid");
        // a paused process completes nothing: lost() may complete only once it runs again, but then promptly
        ChildHolder.Reply lost = child.request("await-lost " + tryBound(Duration.ZERO).toMillis(),
                tryBound(Duration.ZERO).multipliedBy(2));
        assertThat(lost.kind() + " " + lost.argument()).as("lost() in the resumed holder").isEqualTo("lost true");
        // README: a lease lost is one WARN line with the lock's name and the reason, in the holder's own log
        Awaitility.await("the resumed holder's log line of the loss of '" + name + "'").atMost(tryBound(Duration.ZERO))
                .pollInterval(Duration.ofMillis(50)).until(() -> child.stderrLines().stream()
                        .anyMatch(l -> l.contains("WARN") && l.contains("'" + name + "'") && l.contains(" lost: ")));
        assertThat(accepted).as("the fenced resource accepting the paused holder's write").isFalse();
        assertThat(contender.isValid()).isTrue();
        HistoryChecker.assertAvailableWithin(history, name, pausedAt, failoverBound());
        HistoryChecker.assertConsistent(history);

        ChildHolder.Reply released = child.request("release", tryBound(Duration.ZERO));
        // closing a lost lease is no error: the shared layer has released it in the background, or does now
        assertThat(released.kind()).as("the child's close of its lost lease: " + released).isEqualTo("released");
        assertThat(contender.isValid()).as("the new holder after the paused one closed its lease").isTrue();
        assertThat(client().lock(name).tryLock()).as("the lock after the paused holder closed its lost lease").isEmpty();
    }

    @Test
    @DisplayName("lost() does not complete while the holder is live and connected, past a whole lease")
    void lostDoesNotCompleteForLiveHolder() throws Exception {
        Lease lease = hold(client().lock(name()));

        // a loss wrongly scheduled from the grant alone fires at lease - safetyMargin: watch beyond the lease
        Duration watched = lease().plus(slack());
        Awaitility.await("lost() to stay incomplete and the lease valid").during(watched)
                .atMost(watched.plus(tryBound(Duration.ZERO))).pollInterval(options().safetyMargin().dividedBy(4))
                .until(() -> !lease.lost().toCompletableFuture().isDone() && lease.isValid());

        assertThat(lease.lost().toCompletableFuture()).isNotDone();
        lease.ensureValid();
        assertThat(lease.remaining()).isPositive();
    }

    private void checkThenWrite(ChildHolder child, History.Grant grant, FencedResource resource) {
        ChildHolder.Reply check = child.request("check-then-write", tryBound(Duration.ZERO));
        assertThat(check.kind()).as("the child's check of its fresh lease: " + check).isEqualTo("valid");
        grant.valid(check.sentAt());
        ChildHolder.Reply write = child.next(tryBound(Duration.ZERO));
        assertThat(write.kind()).isEqualTo("write");
        assertThat(resource.write(grant)).as("the child's first write").isTrue();
    }
}
