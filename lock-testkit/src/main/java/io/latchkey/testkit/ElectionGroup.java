package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import io.latchkey.Candidacy;
import io.latchkey.ElectionListener;
import io.latchkey.Leadership;
import io.latchkey.LockClient;
import io.latchkey.Revocation;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.time.Duration;
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
 * What the election contract's groups share: candidates that record their terms in one
 * {@link History} (a term is granted when {@code elected} is called, observed valid by a watcher as
 * often as it can, and released when {@code revoked} is called), candidates in child JVMs, and the
 * wait for a leader.
 */
abstract class ElectionGroup extends KitGroup {

    ElectionGroup() {
        super("election-contract-", "election:", "election");
    }

    @Override
    abstract ElectionContract<?> contract();

    /** A line of a child's election events ({@code elected <term>}, {@code revoked <term> <reason> <valid>}), and when it came. */
    record ChildEvent(String line, long at) {
    }

    /** A candidate in a child JVM and its election events, as they come. */
    static final class ChildLeader {
        final ChildHolder holder;
        final BlockingQueue<ChildEvent> events = new LinkedBlockingQueue<>();
        long term;
        History.Grant grant;

        ChildLeader(ChildHolder holder) {
            this.holder = holder;
        }

        /** The child's next election event, within {@code bound}. */
        ChildEvent next(Duration bound) throws InterruptedException {
            ChildEvent e = events.poll(bound.toNanos(), TimeUnit.NANOSECONDS);
            if (e == null) {
                throw holder.failure("the child told no election event within " + bound);
            }
            return e;
        }
    }

    /** A child JVM that campaigns in {@code name} and leads, its term recorded in {@code history}. */
    final ChildLeader childLeader(String name, History history) throws InterruptedException {
        ChildLeader child = new ChildLeader(childHolder());
        child.holder.onEvents(line -> child.events.add(new ChildEvent(line, History.now())));
        long sentAt = History.now();
        ChildHolder.Reply r = child.holder.campaign(name, tryBound(Duration.ZERO));
        assertThat(r.kind()).as("the child's answer to campaign: " + r).isEqualTo("campaigning");
        ChildEvent elected = child.next(patientWait());
        assertThat(elected.line()).as("the child's first election event").startsWith("elected ");
        child.term = Long.parseLong(elected.line().substring("elected ".length()));
        child.grant = history.acquired("child-" + child.holder.pid(), name, child.term, sentAt, elected.at());
        return child;
    }

    /** Starts a candidacy of {@code client} on {@code name}; closed after the test. */
    final Candidate campaign(LockClient client, String name, String actor, History history) {
        Candidate c = new Candidate(actor, name, history);
        c.candidacy = track(client.election(name).campaign(c));
        return c;
    }

    /** The one candidate other than {@code previous} that leads within {@code bound}. */
    static Candidate awaitLeader(List<Candidate> candidates, Candidate previous, Duration bound) {
        Awaitility.await("a leader other than " + (previous == null ? "none" : previous.actor)).atMost(bound)
                .pollInterval(Duration.ofMillis(5))
                .until(() -> leaders(candidates).stream().anyMatch(c -> c != previous));
        List<Candidate> leaders = leaders(candidates);
        assertThat(leaders).as("leaders at once").hasSize(1);
        return leaders.get(0);
    }

    /** The candidates that lead and whose listener has been told so: a candidacy leads before it tells. */
    static List<Candidate> leaders(List<Candidate> candidates) {
        return candidates.stream().filter(c -> c.told != null && c.candidacy.isLeader()).toList();
    }

    /** A candidate's listener: its terms in the history, each watched while it lasts. */
    final class Candidate implements ElectionListener {
        final String actor;
        final String name;
        final History history;
        /** {when won, term number} of every term won, in order. */
        final List<long[]> terms = new CopyOnWriteArrayList<>();
        final List<Revocation> revocations = new CopyOnWriteArrayList<>();
        volatile Candidacy candidacy;
        /** The term its listener was told of last, until told it ended. */
        volatile Leadership told;
        volatile long electedAt;
        volatile long revokedAt;
        /** The current term's validity deadline, from its {@code remaining()} at the watcher's last look. */
        volatile long deadline;
        private History.Grant grant;
        private AtomicBoolean stop;

        Candidate(String actor, String name, History history) {
            this.actor = actor;
            this.name = name;
            this.history = history;
        }

        @Override
        public void elected(Leadership leadership) {
            long at = History.now();
            assertThat(leadership.electionName()).isEqualTo(name);
            grant = history.acquired(actor, name, leadership.term(), at, at);
            stop = new AtomicBoolean();
            deadline = 0;
            History.Grant watched = grant;
            AtomicBoolean stopped = stop;
            executor().submit(() -> {
                while (!stopped.get()) {
                    long now = History.now();
                    Duration left = leadership.remaining();
                    if (!watched.check(leadership::isValid)) {
                        return null;
                    }
                    deadline = now + left.toNanos();
                    Thread.sleep(1); // the pace of observation
                }
                return null;
            });
            terms.add(new long[] {at, leadership.term()});
            electedAt = at;
            told = leadership;
        }

        @Override
        public void revoked(Leadership leadership, Revocation why) {
            long at = History.now();
            told = null;
            stop.set(true);
            grant.released(at);
            revokedAt = at;
            revocations.add(why);
        }
    }
}
