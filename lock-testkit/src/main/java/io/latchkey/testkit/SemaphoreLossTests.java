package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedSemaphore;
import io.latchkey.LockLostException;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.history.FencedPermits;
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
 * Rule 7 for semaphores: if the backend may have given a permit to someone else, its lease is invalid
 * and {@code lost()} complete no later than that grant; a paused holder finds out before it writes,
 * the resource fenced per slot refuses its write, and the other holders keep theirs.
 */
abstract class SemaphoreLossTests extends SemaphoreGroup {

    @Test
    @DisplayName("pause (SIGSTOP) of a holder longer than the lease: its slot goes to a contender; after SIGCONT it finds"
            + " its lease invalid before it writes, the per-slot fenced resource refuses it, the other holder writes on")
    void pausedHolderFindsPermitInvalidAndIsFenced() throws Exception {
        String name = name();
        History history = new History();
        FencedPermits resource = new FencedPermits(name);
        Held other = hold(client().semaphore(name, 2), history, "other-holder");
        assertThat(resource.write(other.grant())).isTrue();
        ChildHolder child = childHolder();
        History.Grant childGrant = childHolds(child, name, 2, history);
        ChildHolder.Reply first = child.request("check-then-write", tryBound(Duration.ZERO));
        assertThat(first.kind()).as("the child's check of its fresh permit: " + first).isEqualTo("valid");
        childGrant.valid(first.sentAt());
        assertThat(child.next(tryBound(Duration.ZERO)).kind()).isEqualTo("write");
        assertThat(resource.write(childGrant)).as("the child's first write").isTrue();

        long pausedAt = pauseHolder(child, history, name);
        Held next = hold(client().semaphore(name, 2), history, "contender");
        assertThat(next.lease().slot()).as("the contender's slot").isEqualTo(childGrant.slot());
        assertThat(resource.write(next.grant())).as("the new holder's write").isTrue();
        waitOutLease(pausedAt);

        ChildHolder.Reply check = resumeAndCheck(child, childGrant);
        assertThat(child.next(tryBound(Duration.ZERO)).kind()).isEqualTo("write");
        boolean accepted = resource.write(childGrant);

        assertThat(check.kind()).as("the resumed holder's check of its permit").isEqualTo("invalid");
        ChildHolder.Reply lost = child.request("await-lost " + tryBound(Duration.ZERO).toMillis(),
                tryBound(Duration.ZERO).multipliedBy(2));
        assertThat(lost.kind() + " " + lost.argument()).as("lost() in the resumed holder").isEqualTo("lost true");
        assertThat(accepted).as("the per-slot fenced resource accepting the paused holder's write").isFalse();
        other.grant().check(other.lease()::isValid);
        assertThat(resource.write(other.grant())).as("the other slot's holder writing after the pause").isTrue();
        HistoryChecker.assertAvailableWithin(history, History.permitKey(name, childGrant.slot()), pausedAt, failoverBound());
        HistoryChecker.assertPermitsRespected(history, 2);

        assertThat(child.request("release", tryBound(Duration.ZERO)).kind()).as("the child's close of its lost permit")
                .isEqualTo("released");
        assertThat(next.lease().isValid() && other.lease().isValid()).as("the holders after the paused one closed").isTrue();
        assertThat(client().semaphore(name, 2).tryAcquire()).as("a third permit of two").isEmpty();
    }

    @Test
    @DisplayName("network cut of one holder: its lease is invalid and lost() complete no later than another client's grant of its slot")
    void cutHolderLosesPermitBeforeItIsGrantedAgain() throws Exception {
        String name = name();
        History history = new History();
        CuttableClient cut = cuttableClient();
        Held holder = hold(cut.client().semaphore(name, 1), history, "cut-client");
        SemaphoreLease lease = holder.lease();
        AtomicLong lostAt = new AtomicLong();
        lease.lost().thenRun(() -> lostAt.set(History.now()));

        DistributedSemaphore contender = client().semaphore(name, 1);
        AtomicBoolean granted = new AtomicBoolean();
        Future<History.Grant> next = started(() -> {
            long requested = History.now();
            SemaphoreLease l = track(contender.tryAcquire(patientWait()).orElseThrow(
                    () -> new AssertionError("the contender got no permit within " + patientWait())));
            long grantedAt = History.now();
            granted.set(true);
            History.Grant g = history.acquiredPermit("contender", name, l.slot(), l.fencingToken(), requested, grantedAt);
            g.check(l::isValid);
            return g;
        });
        Future<?> watcher = watchValidity(holder.grant(), lease::isValid, granted);

        long cutAt = cutHolder(cut, history, name);

        History.Grant grant = await(next, tryBound(patientWait()), "the contender");
        boolean stillValid = lease.isValid();
        await(watcher, tryBound(Duration.ZERO), "the validity watcher");

        assertThat(stillValid).as("the cut holder's lease right after the contender's grant").isFalse();
        assertThat(lostAt.get()).as("when lost() completed (0: not yet)").isNotZero();
        assertThat(lostAt.get() - grantedAt(history, grant)).as("lost() completion relative to the contender's grant (ns)")
                .isLessThanOrEqualTo(0);
        assertThatThrownBy(lease::ensureValid).isInstanceOf(LockLostException.class).hasMessageContaining(name);
        HistoryChecker.assertAvailableWithin(history, History.permitKey(name, 0), cutAt, failoverBound());
        HistoryChecker.assertPermitsRespected(history, 1);

        cut.restore();
        // once the network heals the backend answers again, but a lost permit stays lost
        Awaitility.await().during(slack()).atMost(slack().multipliedBy(2)).until(() -> !lease.isValid());
        lease.close();
        assertThat(client().semaphore(name, 1).tryAcquire()).as("the permit after the cut holder closed its lost lease")
                .isEmpty();
    }
}
