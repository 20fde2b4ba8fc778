package io.latchkey.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.testkit.CrashFailover;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.event.LeaderEventPublisher;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Spring Integration's {@link LockRegistryLeaderInitiator} on {@link LatchkeyLockRegistry}: two
 * initiators, each on a registry of its own client, as two processes would run them. Exactly one leads;
 * when the leader's client closes, it yields or it stops, the other leads within a bound of the options;
 * and never two at once: at each grant the other candidate's lease is no longer valid, and the
 * initiators' callbacks overlap at most by the initiator's own lag (it notices a lost lock at its next
 * heartbeat).
 */
abstract class LeaderContract {

    /** The connection URI of the shared server with the backend's options. */
    abstract String uri();

    /** The {@code lease} option of {@link #uri()}. */
    abstract Duration lease();

    /** The {@code timeout} option of {@link #uri()}. */
    abstract Duration timeout();

    static final Duration HEARTBEAT = Duration.ofMillis(200);
    static final Duration BUSY_WAIT = Duration.ofMillis(50);

    /**
     * How long after the leader lets go the other may take to lead: its pending {@code tryLock} of a
     * heartbeat, a busy wait, the wake-up of a waiter and one round trip.
     */
    Duration handOverBound() {
        return HEARTBEAT.plus(BUSY_WAIT).plus(CrashFailover.WAKE_UP_BUDGET).plus(timeout()).plus(timeout());
    }

    /** How late an initiator may report a revocation: it learns of a loss at its next heartbeat. */
    Duration revokeLag() {
        return HEARTBEAT.plus(BUSY_WAIT).plus(timeout());
    }

    /** A bound for waits that assert no timing: only a broken election makes them time out. */
    Duration patience() {
        return lease().multipliedBy(5);
    }

    /** One grant or revocation as a candidate saw it, on the monotonic clock. */
    record Event(String who, boolean granted, long at, long token, boolean othersValid) {
    }

    private final List<Event> events = new ArrayList<>();
    private final List<Node> nodes = new ArrayList<>();
    private final String role = "si:leader:" + UUID.randomUUID();

    /** One application instance: a client, its registry, a candidate and its initiator. */
    final class Node implements Candidate {
        final String id;
        final LockClient client = LockClient.connect(uri());
        final LatchkeyLockRegistry registry = new LatchkeyLockRegistry(client);
        final LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry, this);
        volatile Lease lease;

        Node(String id) {
            this.id = id;
            initiator.setHeartBeatMillis(HEARTBEAT.toMillis());
            initiator.setBusyWaitMillis(BUSY_WAIT.toMillis());
            initiator.setLeaderEventPublisher(new Silent());
        }

        @Override
        public String getRole() {
            return role;
        }

        @Override
        public String getId() {
            return id;
        }

        @Override
        public void onGranted(Context ctx) {
            // the initiator grants on the thread that holds the lock: the registry gives its lease
            Lease mine = registry.lease(role).orElseThrow();
            lease = mine;
            boolean othersValid = nodes.stream().anyMatch(n -> n != this && n.lease != null && n.lease.isValid());
            record(new Event(id, true, System.nanoTime(), mine.fencingToken(), othersValid));
        }

        @Override
        public void onRevoked(Context ctx) {
            record(new Event(id, false, System.nanoTime(), -1, false));
        }

        boolean leads() {
            return initiator.getContext().isLeader();
        }
    }

    private static final class Silent implements LeaderEventPublisher {
        @Override
        public void publishOnGranted(Object source, Context context, String role) {
        }

        @Override
        public void publishOnRevoked(Object source, Context context, String role) {
        }

        @Override
        public void publishOnFailedToAcquire(Object source, Context context, String role) {
        }
    }

    private void record(Event event) {
        synchronized (events) {
            events.add(event);
        }
    }

    private List<Event> events() {
        synchronized (events) {
            return List.copyOf(events);
        }
    }

    @AfterEach
    void stopNodes() {
        nodes.forEach(n -> {
            n.initiator.stop();
            n.client.close();
        });
    }

    private List<Node> startTwo() {
        nodes.add(new Node("first"));
        nodes.add(new Node("second"));
        nodes.forEach(n -> n.initiator.start());
        return nodes;
    }

    private Node leader() {
        awaitTrue("one of the two leads", () -> nodes.stream().filter(Node::leads).count() == 1);
        Node leader = nodes.stream().filter(Node::leads).findFirst().orElseThrow();
        // a few heartbeats: the other keeps asking and keeps being refused
        long until = System.nanoTime() + HEARTBEAT.multipliedBy(4).toNanos();
        while (System.nanoTime() < until) {
            assertThat(nodes.stream().filter(Node::leads).toList()).containsExactly(leader);
            pause();
        }
        return leader;
    }

    private Node other(Node node) {
        return nodes.get(0) == node ? nodes.get(1) : nodes.get(0);
    }

    private long awaitTrue(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + patience().toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waiting until " + what).isLessThan(deadline);
            pause();
        }
        return System.nanoTime();
    }

    /** A poll's pause: short against the bounds asserted, long enough not to take a core from the servers. */
    private static void pause() {
        try {
            Thread.sleep(5);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while polling", e);
        }
    }

    @Test
    void theOtherLeadsOnceTheLeadersClientCloses() {
        startTwo();
        Node first = leader();
        Node second = other(first);
        long closed = System.nanoTime();
        first.client.close();
        long leads = awaitTrue("the other leads", second::leads);
        awaitTrue("the closed one is revoked", () -> !first.leads());
        assertThat(Duration.ofNanos(leads - closed)).isLessThanOrEqualTo(handOverBound());
        assertNeverTwoAtOnce(2);
        assertThat(second.lease.fencingToken()).isGreaterThan(first.lease.fencingToken());
    }

    @Test
    void yieldingAndStoppingHandLeadershipOver() {
        startTwo();
        Node first = leader();
        Node second = other(first);
        long yielded = System.nanoTime();
        first.initiator.getContext().yield();
        long leads = awaitTrue("the other leads after the yield", second::leads);
        assertThat(Duration.ofNanos(leads - yielded)).isLessThanOrEqualTo(handOverBound().plus(HEARTBEAT));
        assertThat(leader()).isSameAs(second);

        long stopped = System.nanoTime();
        second.initiator.stop();
        long back = awaitTrue("the first leads again after the other stopped", first::leads);
        assertThat(Duration.ofNanos(back - stopped)).isLessThanOrEqualTo(handOverBound());
        assertNeverTwoAtOnce(3);
    }

    /** Each grant found every other lease invalid, tokens grew, and callbacks overlapped by the lag at most. */
    private void assertNeverTwoAtOnce(int grants) {
        awaitTrue("every revocation reported", () -> events().stream().filter(e -> !e.granted()).count() >= grants - 1);
        List<Event> seen = events();
        assertThat(seen.stream().filter(Event::granted)).hasSize(grants).noneMatch(Event::othersValid);
        assertThat(seen.stream().filter(Event::granted).mapToLong(Event::token)).isSorted().doesNotHaveDuplicates();
        for (int i = 0; i < seen.size(); i++) {
            Event grant = seen.get(i);
            if (!grant.granted()) {
                continue;
            }
            // the grant of the one before must have been revoked, at most the initiator's lag after this grant
            for (Event earlier : seen.subList(0, i)) {
                if (earlier.granted() && !earlier.who().equals(grant.who())) {
                    Event revoke = seen.stream().filter(e -> !e.granted() && e.who().equals(earlier.who())
                            && e.at() > earlier.at()).findFirst().orElseThrow();
                    assertThat(Duration.ofNanos(revoke.at() - grant.at())).as("revocation of %s after grant of %s",
                            earlier.who(), grant.who()).isLessThanOrEqualTo(revokeLag());
                }
            }
        }
    }
}
