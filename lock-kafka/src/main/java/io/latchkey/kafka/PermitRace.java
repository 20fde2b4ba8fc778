package io.latchkey.kafka;

import io.latchkey.LockException;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.LeaseEvidence;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import org.apache.kafka.clients.admin.MemberDescription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquire of a permit of semaphore {@code name} of {@code N} permits: a member in the group of
 * each slot, started together, each waiting as a lock's member waits ({@link GroupMember#awaitGrant});
 * the first one assigned its slot's partition is the permit, and the others leave before the acquire
 * returns, so that a slot one of them was assigned meanwhile passes on at once and the next acquire
 * of this client finds them gone. An acquire that gets no permit, or fails, does not wait for its
 * members to leave (they hold nothing, and a cut client's would take the call past its bound): they
 * leave on their own threads, and closing the client waits for them.
 *
 * <p>Each member reports to a {@link Candidate} of the acquire's evidence, which passes on only the
 * chosen member's confirmations and loss: a member that leaves unchosen never touches the lease.
 *
 * <p>The acquire gets no permit when every member found its slot held. But a slot's group gives a free
 * slot to whichever member reaches it first, so acquires that start together may each win several
 * slots for a moment, and another none, until each keeps one and lets the rest go. So when every slot
 * looked held, the coordinator is asked once who holds each (one DESCRIBE of the {@code N} groups): the
 * members' client ids end with their acquire's id, the same in every slot's group, so a slot whose
 * holder's acquire holds another slot too is about to pass on, as is one with no holder. While there is
 * such a slot, its member stays, within the call's bound, for the rebalance that hands it on; with every
 * slot held by a different acquire, the semaphore is full.
 *
 * <p>Not thread-safe: one acquiring thread runs it; its members' waits run on {@code waits}.
 */
final class PermitRace {

    /** The member's logger: these lines were the member's before the race had a class of its own. */
    private static final Logger log = LoggerFactory.getLogger(GroupMember.class);

    private final KafkaLockBackend backend;
    private final String name;
    private final List<GroupMember> members = new ArrayList<>();
    private final List<Candidate> candidates = new ArrayList<>();
    private final ExecutorService waits;
    /** This acquire's id, which ends its members' client ids. */
    private final String race = Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1);

    /**
     * @param knownName whether this client used the semaphore's name before (its topic known)
     * @param waits where the members' waits run, one task each
     */
    PermitRace(KafkaLockBackend backend, String name, String topic, int permits, boolean knownName, LeaseEvidence evidence,
            ExecutorService waits) {
        this.backend = backend;
        this.name = name;
        this.waits = waits;
        for (int slot = 0; slot < permits; slot++) {
            Candidate candidate = new Candidate(evidence);
            GroupMember member = new GroupMember(backend, name, topic, slot, permits, KafkaLockBackend.MEMBERS.incrementAndGet(),
                    race, candidate);
            member.knownName = knownName;
            candidates.add(candidate);
            members.add(member);
        }
    }

    List<GroupMember> members() {
        return members;
    }

    /**
     * Starts the members and waits for the first grant; see the class comment.
     *
     * @return the member granted, its evidence now the acquire's, or {@code null} if every slot stayed held
     */
    GroupMember await(Deadline deadline) throws InterruptedException {
        long deadlineNanos = deadline.nanoTime();
        for (GroupMember m : members) {
            m.start(deadlineNanos);
        }
        GroupMember winner = null;
        try {
            winner = firstGranted(members, m -> () -> m.awaitGrant(deadlineNanos));
            if (winner == null) {
                long bound = deadline.callBound(backend.options().timeout()).nanoTime();
                List<GroupMember> passing = passingOn(bound);
                if (!passing.isEmpty()) {
                    log.debug("semaphore '{}': every slot looked held, but {} of {} are passing on: staying for them",
                            name, passing.size(), members.size());
                    // only until the call's bound: a slot passing on is handed on in a rebalance, not asked about again
                    winner = firstGranted(passing, m -> () -> m.awaitGrantedUntil(bound));
                }
            }
            if (winner != null) {
                candidates.get(members.indexOf(winner)).choose();
            }
            return winner;
        } finally {
            leaveAllBut(winner);
        }
    }

    /**
     * Waits, on {@code waits}, for the first of {@code among} granted, each waiting as {@code await} says
     * (true if granted, false if its slot stayed held).
     *
     * @return it, or {@code null} if each found its slot held
     * @throws LockException the first failure, if none was granted
     */
    private GroupMember firstGranted(List<GroupMember> among, Function<GroupMember, Callable<Boolean>> await)
            throws InterruptedException {
        CompletionService<Boolean> done = new ExecutorCompletionService<>(waits);
        Map<Future<Boolean>, GroupMember> waiting = new HashMap<>();
        for (GroupMember m : among) {
            waiting.put(done.submit(await.apply(m)), m);
        }
        RuntimeException failure = null;
        try {
            for (int i = 0; i < among.size(); i++) {
                Future<Boolean> f = done.take();
                try {
                    if (f.get()) {
                        return waiting.get(f);
                    }
                } catch (ExecutionException e) {
                    if (failure == null) {
                        failure = e.getCause() instanceof RuntimeException r ? r
                                : new LockException(name, "acquiring a permit of semaphore '" + name + "' failed: " + e.getCause(),
                                        e.getCause());
                    }
                }
            }
        } finally {
            // the members still waiting are released by the caller, which ends their waits
            waiting.keySet().forEach(f -> f.cancel(false));
        }
        if (failure != null) {
            throw failure;
        }
        return null;
    }

    /**
     * The members whose slot is passing on, by the coordinator, asked within {@code untilNanos}: a slot
     * with no holder, or whose holder's acquire holds another slot too; see the class comment. Empty if
     * the coordinator did not answer in time.
     */
    private List<GroupMember> passingOn(long untilNanos) throws InterruptedException {
        long left = untilNanos - System.nanoTime();
        if (left <= 0) {
            return List.of();
        }
        List<String> groups = new ArrayList<>();
        for (GroupMember m : members) {
            groups.add(m.group());
        }
        Map<String, List<MemberDescription>> holders = backend.assignedMembers(name, groups,
                Math.min(left, backend.options().timeout().toNanos() / 2));
        if (holders == null) {
            return List.of();
        }
        Map<String, Integer> slotsPerRace = new HashMap<>();
        holders.values().forEach(held -> held.forEach(h -> slotsPerRace.merge(raceOf(h.clientId()), 1, Integer::sum)));
        List<GroupMember> passing = new ArrayList<>();
        for (GroupMember m : members) {
            List<String> ids = holders.getOrDefault(m.group(), List.of()).stream().map(MemberDescription::clientId).toList();
            if (m.granted() || ids.isEmpty() || ids.stream().anyMatch(id -> slotsPerRace.get(raceOf(id)) > 1)) {
                passing.add(m);
            }
        }
        return passing;
    }

    /** The acquire a slot member's client id names: what follows its last {@code -}. */
    static String raceOf(String clientId) {
        return clientId.substring(clientId.lastIndexOf('-') + 1);
    }

    /**
     * Every member but {@code kept} leaves, all at once; with a member kept, waits until they have, each
     * bounded.
     */
    private void leaveAllBut(GroupMember kept) {
        List<GroupMember> leaving = new ArrayList<>();
        for (GroupMember m : members) {
            if (m != kept && m.leave()) {
                leaving.add(m);
            }
        }
        if (kept == null) {
            return;
        }
        for (GroupMember m : leaving) {
            try {
                m.awaitLeft();
            } catch (RuntimeException e) {
                // not the permit: its slot, if it was assigned one meanwhile, ends with its session
                log.warn("semaphore '{}': a member that was not kept did not confirm leaving group '{}': {}", name, m.group(),
                        e.getMessage());
            }
        }
    }

    /**
     * A member's view of the acquire's evidence: it keeps what the member reports until the member is
     * chosen, then passes that on and everything after; a member never chosen never reaches the lease.
     */
    static final class Candidate implements LeaseEvidence {

        private final LeaseEvidence lease;
        private boolean chosen; // guarded by this, as the fields below
        private long sentAtNanos;
        private Duration serverTtl;
        private String lostReason;
        private Throwable lostCause;

        Candidate(LeaseEvidence lease) {
            this.lease = lease;
        }

        @Override
        public void confirmed(long sentAtNanos, Duration serverTtl) {
            synchronized (this) {
                if (!chosen) {
                    if (this.serverTtl == null || sentAtNanos - this.sentAtNanos > 0) {
                        this.sentAtNanos = sentAtNanos;
                        this.serverTtl = serverTtl;
                    }
                    return;
                }
            }
            lease.confirmed(sentAtNanos, serverTtl);
        }

        @Override
        public void lost(String reason, Throwable cause) {
            synchronized (this) {
                if (!chosen) {
                    if (lostReason == null) {
                        lostReason = reason;
                        lostCause = cause;
                    }
                    return;
                }
            }
            lease.lost(reason, cause);
        }

        /** The member is the permit: what it reported so far reaches the lease, and from now on all it reports. */
        void choose() {
            long sentAt;
            Duration ttl;
            String reason;
            Throwable cause;
            synchronized (this) {
                chosen = true;
                sentAt = sentAtNanos;
                ttl = serverTtl;
                reason = lostReason;
                cause = lostCause;
            }
            if (ttl != null) {
                lease.confirmed(sentAt, ttl);
            }
            if (reason != null) {
                lease.lost(reason, cause);
            }
        }
    }
}
