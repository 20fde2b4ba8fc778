package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Candidacy;
import io.latchkey.Election;
import io.latchkey.ElectionListener;
import io.latchkey.Holder;
import io.latchkey.Leadership;
import io.latchkey.LockClient;
import io.latchkey.Revocation;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The election contract's tests; see {@link ElectionContract}. Each candidate records its terms in one
 * {@link History}: a term is granted when {@code elected} is called, observed valid by a watcher as
 * often as it can, and released when {@code revoked} is called.
 */
abstract class ElectionTests extends ElectionGroup {

    static final int STANDBYS = 5;

    @Test
    @DisplayName("candidates of three clients: one leads at a time, each term above the last, and a resignation"
            + " or a close hands over within wake-up + slack")
    void oneLeaderAtATimeAndHandOvers() throws Exception {
        String name = name();
        History history = new History();
        List<Candidate> candidates = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            candidates.add(campaign(client(), name, "candidate" + i, history));
        }
        Candidate first = awaitLeader(candidates, null, patientWait());
        assertThat(leaders(candidates)).as("leaders among the candidates").containsExactly(first);

        long resignedAt = History.now();
        first.candidacy.resign();
        assertThat(first.candidacy.isLeader()).as("a candidate that resigned leads").isFalse();
        Candidate second = awaitLeader(candidates, first, tryBound(wakeUpBound()));
        assertThat(Duration.ofNanos(second.electedAt - resignedAt)).as("from the resignation to the next leader")
                .isLessThanOrEqualTo(wakeUpBound());
        assertThat(first.revocations).as("the first leader's ends").containsExactly(Revocation.RESIGNED);

        long closedAt = History.now();
        second.candidacy.close();
        assertThat(second.revocations).as("ends told before close returned").containsExactly(Revocation.CLOSED);
        Candidate third = awaitLeader(candidates, second, tryBound(wakeUpBound()));
        assertThat(third).as("the next leader, while the first stands aside").isNotSameAs(first);
        assertThat(Duration.ofNanos(third.electedAt - closedAt)).as("from the close to the next leader")
                .isLessThanOrEqualTo(wakeUpBound());

        List<Long> terms = candidates.stream().flatMap(c -> c.terms.stream()).sorted(Comparator.comparingLong(t -> t[0]))
                .map(t -> t[1]).toList();
        assertThat(terms).as("terms in the order they were won").hasSize(3).isSorted().doesNotHaveDuplicates();
        HistoryChecker.assertConsistent(history);
    }

    @Test
    @DisplayName("a cut leader is told revoked as its term becomes invalid, before another leads, and leads again"
            + " after the network heals")
    void cutLeaderIsRevokedFirst() throws Exception {
        String name = name();
        History history = new History();
        CuttableClient cut = cuttableClient();
        Candidate leader = campaign(cut.client(), name, "cut-leader", history);
        awaitLeader(List.of(leader), null, patientWait());
        Candidate standby = campaign(client(), name, "standby", history);
        Thread.sleep(options().safetyMargin().toMillis()); // the standby's request reaches the server

        cutHolder(cut, history, name);
        Awaitility.await("the cut leader's revoked").atMost(failoverBound()).pollInterval(Duration.ofMillis(10))
                .until(() -> !leader.revocations.isEmpty());
        assertThat(leader.revocations).containsExactly(Revocation.LOST);
        assertThat(leader.deadline).as("the term's deadline, as its watcher last read it").isNotZero();
        assertThat(Duration.ofNanos(leader.revokedAt - leader.deadline))
                .as("from the term's validity deadline to revoked").isLessThanOrEqualTo(slack());
        awaitLeader(List.of(standby), null, failoverBound());
        assertThat(standby.terms.get(0)[1]).as("the standby's term").isGreaterThan(leader.terms.get(0)[1]);

        cut.restore();
        standby.candidacy.close();
        awaitLeader(List.of(leader), null, patientWait()); // campaigning again by itself since its loss
        assertThat(leader.terms).as("the cut candidate's terms").hasSize(2);
        HistoryChecker.assertConsistent(history);
    }

    @Test
    @DisplayName("leader(), asked by a client that does not campaign, tells every change at once: none, the first"
            + " leader's owner and term, the next after a resignation, none after the last close")
    void leaderIsKnownAfterEveryChange() throws Exception {
        String name = name();
        History history = new History();
        LockClient observer = clientOwnedBy("observer");
        Election observed = observer.election(name);
        assertThat(observed.leader()).as("the leader before any candidate").isEmpty();
        Instant started = Instant.now();
        Candidate a = campaign(clientOwnedBy("candidate-a"), name, "a", history);
        awaitLeader(List.of(a), null, patientWait());
        Candidate b = campaign(clientOwnedBy("candidate-b"), name, "b", history);
        Holder first = observed.leader().orElseThrow(() -> new AssertionError("no leader while candidate-a leads"));
        assertThat(first.owner()).as("the first leader's owner").isEqualTo("candidate-a");
        assertThat(first.clientStarted()).as("when the leader's client started").isBefore(started.plusSeconds(1));
        assertThat(first.thread()).as("the thread that won the term").startsWith("latchkey-election-");
        assertThat(observer.lock(name).inspect().token()).as("the election lock's token: the term")
                .hasValue(a.told.term());

        a.candidacy.resign();
        Candidate next = awaitLeader(List.of(a, b), a, tryBound(wakeUpBound()));
        assertThat(next).as("the next leader").isSameAs(b);
        assertThat(observed.leader().map(Holder::owner)).as("the leader after the resignation").hasValue("candidate-b");
        assertThat(observer.lock(name).inspect().token()).as("the term after the resignation").hasValue(b.told.term());

        a.candidacy.close();
        b.candidacy.close();
        assertThat(observed.leader()).as("the leader after every candidate closed").isEmpty();
        HistoryChecker.assertConsistent(history);
    }

    @Test
    @DisplayName("a healthy leader among five standbys keeps its one term for three leases")
    void healthyLeaderKeepsItsTerm() throws Exception {
        String name = name();
        History history = new History();
        List<Candidate> candidates = new ArrayList<>();
        candidates.add(campaign(client(), name, "leader", history));
        Candidate leader = awaitLeader(candidates, null, patientWait());
        for (int i = 0; i < STANDBYS; i++) {
            candidates.add(campaign(client(), name, "standby" + i, history));
        }
        Thread.sleep(lease().multipliedBy(3).toMillis());
        assertThat(leaders(candidates)).as("leaders after three leases").containsExactly(leader);
        for (Candidate c : candidates) {
            assertThat(c.revocations).as("ends of %s", c.actor).isEmpty();
            assertThat(c.terms).as("terms of %s", c.actor).hasSize(c == leader ? 1 : 0);
        }
        HistoryChecker.assertConsistent(history);
    }

    @Test
    @DisplayName("closing the client ends its candidacy: revoked(CLOSED) within a timeout, and the lock is free")
    void closingTheClientEndsTheCandidacy() throws Exception {
        String name = name();
        History history = new History();
        LockClient own = contract().newClient();
        Candidate leader = campaign(own, name, "leader", history);
        awaitLeader(List.of(leader), null, patientWait());
        own.close();
        assertThat(leader.revocations).as("ends told before the client's close returned")
                .containsExactly(Revocation.CLOSED);
        assertThat(leader.candidacy.isLeader()).isFalse();
        assertThat(client().lock(name).tryLock(wakeUpBound())).as("the lock after the client's close").isPresent()
                .get().satisfies(lease -> track(lease));
        HistoryChecker.assertConsistent(history);
    }

    @Test
    @DisplayName("kill -9 of a leader in a child JVM: a standby leads within lease + wake-up (250 ms) + slack, with a"
            + " higher term")
    void killedLeaderIsReplacedWithinTheLease() throws Exception {
        String name = name();
        History history = new History();
        ChildLeader child = childLeader(name, history);
        Candidate standby = campaign(client(), name, "standby", history);
        Thread.sleep(options().safetyMargin().toMillis()); // the standby's request reaches the server

        long killedAt = killHolder(child.holder, history, name);
        awaitLeader(List.of(standby), null, failoverBound());

        HistoryChecker.assertAvailableWithin(history, name, killedAt, crashBound());
        assertThat(standby.terms.get(0)[1]).as("the standby's term").isGreaterThan(child.term);
        HistoryChecker.assertConsistent(history);
    }

    @Test
    @DisplayName("pause (SIGSTOP) of a leader in a child JVM past the lease: a standby leads meanwhile, and on SIGCONT"
            + " the old leader is told revoked(LOST) before anything else, its term already invalid")
    void pausedLeaderIsRevokedOnWaking() throws Exception {
        String name = name();
        History history = new History();
        ChildLeader child = childLeader(name, history);
        Candidate standby = campaign(client(), name, "standby", history);
        Thread.sleep(options().safetyMargin().toMillis()); // the standby's request reaches the server

        long pausedAt = pauseHolder(child.holder, history, name);
        awaitLeader(List.of(standby), null, patientWait());
        waitOutLease(pausedAt);
        HistoryChecker.assertAvailableWithin(history, name, pausedAt, failoverBound());
        child.holder.resume();
        ChildEvent first = child.next(tryBound(Duration.ZERO));

        assertThat(first.line()).as("the resumed leader's first election event")
                .isEqualTo("revoked " + child.term + " LOST false");
        child.grant.invalid(first.at());
        assertThat(standby.terms.get(0)[1]).as("the standby's term").isGreaterThan(child.term);
        assertThat(leaders(List.of(standby))).as("the leader once the old one woke").containsExactly(standby);
        HistoryChecker.assertConsistent(history);
    }
}
