package io.latchkey.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Candidacy;
import io.latchkey.ElectionListener;
import io.latchkey.Leadership;
import io.latchkey.Revocation;
import io.latchkey.memory.InMemoryBackend;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.LockBackend;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** {@link io.latchkey.Election} on the in-memory backend: the order of events, their reasons, bad input, close. */
class ElectionTest extends InMemoryFixture {

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

    /** Records "elected <term>" and "revoked <term> <why>" in order. */
    private static final class Events implements ElectionListener {
        final List<String> seen = new CopyOnWriteArrayList<>();
        final List<Leadership> terms = new CopyOnWriteArrayList<>();

        @Override
        public void elected(Leadership leadership) {
            terms.add(leadership);
            seen.add("elected " + leadership.term());
        }

        @Override
        public void revoked(Leadership leadership, Revocation why) {
            assertThat(leadership.isValid()).as("a revoked term is valid").isFalse();
            seen.add("revoked " + leadership.term() + " " + why);
        }

        void awaitSize(int n) {
            awaitTrue(() -> seen.size() >= n, "events " + seen);
        }
    }

    @Test
    @DisplayName("a bad name, no listener, a negative stand-aside or a closed client is refused, naming the election")
    void badInputRefused() {
        SharedLockClient client = newClient();
        assertThatThrownBy(() -> client.election("bad\nname")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control character");
        assertThatThrownBy(() -> client.election("e").campaign(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("listener");
        try (Candidacy c = client.election("e").campaign(new Events())) {
            assertThatThrownBy(() -> c.resign(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("election 'e'").hasMessageContaining("negative");
        }
        client.close();
        assertThatThrownBy(() -> client.election("e")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    @DisplayName("elected and revoked alternate on one thread, each term higher: lost, resigned, then closed")
    void eventsAlternateWithTheirReasons() {
        SharedLockClient client = newClient();
        Events events = new Events();
        Candidacy candidacy = client.election("e").campaign(events);
        events.awaitSize(1);
        assertThat(candidacy.isLeader()).isTrue();
        assertThat(candidacy.leadership()).containsSame(events.terms.get(0));
        assertThat(events.terms.get(0).electionName()).isEqualTo("e");

        server.evict("e"); // the backend ends the term: lost at its next renewal, then campaigning again
        events.awaitSize(3);
        Leadership resigned = events.terms.get(1);
        candidacy.resign(Duration.ZERO); // campaigns again at once: it may lead again, for a new term
        assertThat(candidacy.leadership()).as("the term right after resign").isNotEqualTo(java.util.Optional.of(resigned));
        assertThat(resigned.isValid()).as("the resigned term").isFalse();
        events.awaitSize(5);
        candidacy.close();

        List<Leadership> terms = events.terms;
        assertThat(terms).hasSize(3);
        assertThat(terms.get(0).term()).isLessThan(terms.get(1).term());
        assertThat(terms.get(1).term()).isLessThan(terms.get(2).term());
        assertThat(events.seen).containsExactly("elected " + terms.get(0).term(),
                "revoked " + terms.get(0).term() + " LOST", "elected " + terms.get(1).term(),
                "revoked " + terms.get(1).term() + " RESIGNED", "elected " + terms.get(2).term(),
                "revoked " + terms.get(2).term() + " CLOSED");
        assertThat(candidacy.isLeader()).isFalse();
        assertThat(((Campaign) candidacy).thread.isAlive()).as("the candidacy's thread after close").isFalse();
        assertThat(server.isHeld("e")).as("the election's lock after close").isFalse();
    }

    @Test
    @DisplayName("a resigned leader stands aside, so a waiting candidate of another client leads")
    void resignationHandsOver() {
        Events first = new Events();
        Events second = new Events();
        Candidacy a = newClient().election("e").campaign(first);
        first.awaitSize(1);
        Candidacy b = newClient().election("e").campaign(second);
        a.resign();
        second.awaitSize(1);
        assertThat(b.isLeader()).isTrue();
        assertThat(a.isLeader()).isFalse();
        assertThat(first.seen).hasSize(2).last().asString().endsWith("RESIGNED");
        b.close();
        first.awaitSize(3); // after standing aside for a lease, it campaigns again and leads
        assertThat(a.isLeader()).isTrue();
        a.close();
    }

    @Test
    @DisplayName("a listener that throws does not end the candidacy, and one may close it from inside")
    void listenerFaults() {
        SharedLockClient client = newClient();
        AtomicReference<Candidacy> self = new AtomicReference<>();
        List<String> seen = new CopyOnWriteArrayList<>();
        Candidacy candidacy = client.election("e").campaign(new ElectionListener() {
            @Override
            public void elected(Leadership leadership) {
                seen.add("elected");
                if (seen.size() == 1) {
                    throw new IllegalStateException("the application's own failure");
                }
                awaitTrue(() -> self.get() != null, "the candidacy handed to its listener");
                self.get().close(); // from the candidacy's own thread: does not wait for itself
            }

            @Override
            public void revoked(Leadership leadership, Revocation why) {
                seen.add("revoked " + why);
            }
        });
        awaitTrue(() -> seen.size() == 1, "the first election");
        assertThat(candidacy.isLeader()).as("leader after its listener threw").isTrue();
        candidacy.resign(Duration.ZERO);
        self.set(candidacy);
        awaitTrue(() -> !((Campaign) candidacy).thread.isAlive(), "the candidacy's thread to end");
        assertThat(seen).containsExactly("elected", "revoked RESIGNED", "elected", "revoked CLOSED");
    }

    /**
     * A term whose deadline passes while another thread reads it: the reader's {@code isValid()} ends the
     * lease and completes {@code lost()}, whose callback wakes the candidacy; the candidacy itself reads
     * the lease as it waits. Done under one lock each way, that deadlocked (seen in the contract's cut
     * leader test, with its validity watcher). Every round must end with revoked(LOST) and a close.
     */
    @Test
    @DisplayName("a term read from another thread as its deadline passes ends with revoked(LOST), in every round")
    void termEndingUnderAReaderNeverDeadlocks() throws Exception {
        for (int round = 0; round < 10; round++) {
            SharedLockClient client = newClient();
            io.latchkey.memory.InMemoryBackend backend = backends.get(backends.size() - 1);
            Events events = new Events();
            Candidacy candidacy = client.election("read:" + round).campaign(events);
            events.awaitSize(1);
            Leadership term = events.terms.get(0);
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            List<java.util.concurrent.Future<?>> readers = new java.util.ArrayList<>();
            for (int r = 0; r < 3; r++) {
                readers.add(threads.submit(() -> {
                    while (!stop.get()) {
                        term.isValid();
                        candidacy.isLeader();
                    }
                }));
            }
            backend.reachable.set(false); // no renewal: the deadline passes; and no new term meanwhile
            backend.renewing.set(false);
            events.awaitSize(2);
            stop.set(true);
            for (java.util.concurrent.Future<?> reader : readers) {
                reader.get(PATIENT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            }
            assertThat(events.seen.get(1)).as("round %s", round).endsWith("LOST");
            java.util.concurrent.CompletableFuture.runAsync(candidacy::close, threads)
                    .get(PATIENT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    }

    @Test
    @DisplayName("closing the client tells revoked(CLOSED) before its close returns, and ends the candidacy")
    void clientCloseEndsTheCandidacy() {
        SharedLockClient client = newClient();
        Events events = new Events();
        Candidacy candidacy = client.election("e").campaign(events);
        events.awaitSize(1);
        client.close();
        assertThat(events.seen).hasSize(2).last().asString().endsWith("CLOSED");
        assertThat(((Campaign) candidacy).thread.isAlive()).isFalse();
        assertThat(client.campaigns).isEmpty();
        assertThat(server.isHeld("e")).isFalse();
    }

    @Test
    @DisplayName("an IllegalStateException from the backend of an open client is a failed campaign, tried again")
    void backendIllegalStateWhileOpenIsTriedAgain() {
        InMemoryBackend memory = new InMemoryBackend(server, LEASE, TIMEOUT);
        AtomicInteger failuresLeft = new AtomicInteger(2);
        LockBackend flaky = new LockBackend() {
            @Override
            public String describe(String lockName) {
                return memory.describe(lockName);
            }

            @Override
            public BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
                if (failuresLeft.getAndDecrement() > 0) {
                    throw new IllegalStateException("the backend's own inconsistency");
                }
                return memory.acquire(lockName, deadline, evidence);
            }

            @Override
            public void close() {
                memory.close();
            }
        };
        SharedLockClient client = new SharedLockClient("memory", flaky, OPTIONS);
        clients.add(client);
        Events events = new Events();

        try (Candidacy candidacy = client.election("e").campaign(events)) {
            events.awaitSize(1);
            assertThat(events.seen).containsExactly("elected " + events.terms.get(0).term());
            assertThat(failuresLeft.get()).as("acquires left to fail").isNegative();
            assertThat(candidacy.isLeader()).isTrue();
        }
    }
}
