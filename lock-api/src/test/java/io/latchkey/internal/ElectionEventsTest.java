package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Candidacy;
import io.latchkey.ElectionListener;
import io.latchkey.Leadership;
import io.latchkey.LockListener;
import io.latchkey.Revocation;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The election events a client's {@link LockListener}s receive on the in-memory backend: their terms,
 * reasons and order among the events of the election's lock, and the time each term was led.
 */
class ElectionEventsTest extends InMemoryFixture {

    /** Long enough for any step of these tests on a loaded machine; never reached when they pass. */
    private static final Duration PATIENT = LEASE.multipliedBy(10);

    /** Polls {@code done} until it holds, failing after {@link #PATIENT}. */
    private static void awaitTrue(BooleanSupplier done, String what) {
        long until = System.nanoTime() + PATIENT.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - until > 0) {
                throw new AssertionError("not within " + PATIENT + ": " + what);
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + what, e);
            }
        }
    }

    /**
     * Records a client's events of election {@code name} and of its lock, in order: "acquired <token>",
     * "elected <term>", "revoked <term> <why>", "released"; and each term's time led and its lock's hold.
     */
    private static final class Recorder implements LockListener {
        final String name;
        final List<String> seen = new CopyOnWriteArrayList<>();
        final Map<Long, Duration> led = new ConcurrentHashMap<>();
        final List<Duration> holds = new CopyOnWriteArrayList<>();

        Recorder(String name) {
            this.name = name;
        }

        @Override
        public void acquired(Target target, Duration waitTime, long fencingToken) {
            if (target.equals(Target.lock(name))) {
                seen.add("acquired " + fencingToken);
            }
        }

        @Override
        public void released(Target target, Duration holdTime) {
            if (target.equals(Target.lock(name))) {
                holds.add(holdTime);
                seen.add("released");
            }
        }

        @Override
        public void elected(String election, long term) {
            if (election.equals(name)) {
                seen.add("elected " + term);
            }
        }

        @Override
        public void revoked(String election, long term, Revocation why, Duration led) {
            if (election.equals(name)) {
                this.led.put(term, led);
                seen.add("revoked " + term + " " + why);
            }
        }

        void awaitSize(int n) {
            awaitTrue(() -> seen.size() >= n, "client events " + seen);
        }
    }

    /** The candidate's own listener: its terms, and when it was told each one began. */
    private static final class Candidate implements ElectionListener {
        final List<Leadership> terms = new CopyOnWriteArrayList<>();
        final List<Long> electedAt = new CopyOnWriteArrayList<>();
        final List<String> revoked = new CopyOnWriteArrayList<>();

        @Override
        public void elected(Leadership leadership) {
            electedAt.add(System.nanoTime());
            terms.add(leadership);
        }

        @Override
        public void revoked(Leadership leadership, Revocation why) {
            revoked.add(leadership.term() + " " + why);
        }

        long term(int i) {
            return terms.get(i).term();
        }
    }

    @Test
    @DisplayName("a resigned and then a closed term reach the client's listener between the lock's acquired and released")
    void resignedThenClosed() {
        SharedLockClient client = newClient();
        Recorder events = new Recorder("e");
        client.addListener(events);
        Candidate candidate = new Candidate();
        Candidacy candidacy = client.election("e").campaign(candidate);
        events.awaitSize(2);
        awaitTrue(() -> candidate.terms.size() == 1, "the candidate told of its first term");
        long resignedAt = System.nanoTime();
        candidacy.resign(Duration.ZERO); // campaigns again at once, and leads again: no one else campaigns
        events.awaitSize(6);
        candidacy.close();
        events.awaitSize(8);

        long first = candidate.term(0);
        long second = candidate.term(1);
        assertThat(first).isLessThan(second);
        assertThat(events.seen).containsExactly("acquired " + first, "elected " + first, "revoked " + first + " RESIGNED",
                "released", "acquired " + second, "elected " + second, "revoked " + second + " CLOSED", "released");
        assertThat(candidate.revoked).containsExactly(first + " RESIGNED", second + " CLOSED");
        // led from the grant, before the candidate was told elected, to revoked, after the resign was asked
        assertThat(events.led.get(first)).isGreaterThanOrEqualTo(Duration.ofNanos(resignedAt - candidate.electedAt.get(0)));
        // and the lock's hold, from the same grant, ends at the release, after revoked
        assertThat(events.led.get(first)).isLessThanOrEqualTo(events.holds.get(0));
        assertThat(events.led.get(second)).isPositive().isLessThanOrEqualTo(events.holds.get(1));
    }

    @Test
    @DisplayName("a lost term reaches the client's listener as revoked(LOST), then the next term as elected")
    void lostThenElectedAgain() {
        SharedLockClient client = newClient();
        Recorder events = new Recorder("e");
        client.addListener(events);
        Candidate candidate = new Candidate();
        Candidacy candidacy = client.election("e").campaign(candidate);
        events.awaitSize(2);
        server.evict("e"); // the backend ends the term: lost at its next renewal, then campaigning again
        events.awaitSize(6);
        candidacy.close();
        events.awaitSize(8);

        long first = candidate.term(0);
        long second = candidate.term(1);
        assertThat(events.seen).containsExactly("acquired " + first, "elected " + first, "revoked " + first + " LOST",
                "released", "acquired " + second, "elected " + second, "revoked " + second + " CLOSED", "released");
        assertThat(events.led.get(first)).isPositive().isLessThanOrEqualTo(events.holds.get(0));
    }

    @Test
    @DisplayName("closing the client delivers revoked(CLOSED) and the lock's release before its close returns")
    void clientClose() {
        SharedLockClient client = newClient();
        Recorder events = new Recorder("e");
        client.addListener(events);
        Candidate candidate = new Candidate();
        client.election("e").campaign(candidate);
        events.awaitSize(2);
        client.close();

        long term = candidate.term(0);
        assertThat(events.seen).containsExactly("acquired " + term, "elected " + term, "revoked " + term + " CLOSED",
                "released");
        assertThat(candidate.revoked).containsExactly(term + " CLOSED");
    }

    @Test
    @DisplayName("a client listener that throws on election events affects neither the candidacy nor the other listeners")
    void throwingListener() {
        SharedLockClient client = newClient();
        client.addListener(new LockListener() {
            @Override
            public void elected(String election, long term) {
                throw new IllegalStateException("the application's own failure");
            }

            @Override
            public void revoked(String election, long term, Revocation why, Duration led) {
                throw new IllegalStateException("the application's own failure");
            }
        });
        Recorder events = new Recorder("e");
        client.addListener(events);
        Candidate candidate = new Candidate();
        Candidacy candidacy = client.election("e").campaign(candidate);
        events.awaitSize(2);
        assertThat(candidacy.isLeader()).isTrue();
        candidacy.resign(Duration.ZERO);
        events.awaitSize(6);
        assertThat(candidacy.isLeader()).as("leader again after the listener threw on both events").isTrue();
        candidacy.close();
        events.awaitSize(8);
        assertThat(events.seen).filteredOn(e -> e.startsWith("elected") || e.startsWith("revoked")).containsExactly(
                "elected " + candidate.term(0), "revoked " + candidate.term(0) + " RESIGNED",
                "elected " + candidate.term(1), "revoked " + candidate.term(1) + " CLOSED");
    }
}
