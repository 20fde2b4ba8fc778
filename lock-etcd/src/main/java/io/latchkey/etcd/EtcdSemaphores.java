package io.latchkey.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.grpc.Status;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.LeaseEvidence;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The semaphores of one {@link EtcdLockBackend}: a permit is a slot key
 * {@code <namespace>%semaphores/<escaped name>/<slot>}, {@code slot} from 0 to {@code permits - 1},
 * created only if absent and bound to the client's one etcd lease ({@link EtcdSession}), so that at most
 * {@code permits} holders exist by construction and each slot expires on its own with its holder's lease.
 *
 * <p>Taking a permit is one transaction: put slot key {@code k} if it is absent and, in the same
 * transaction, read every slot key of the semaphore. One RPC and one Raft commit when slot {@code k} is
 * free; {@code k} is the lowest slot this client does not hold already, so an uncontended acquire+release
 * is two RPCs and two commits, as a lock's. If {@code k} was taken the read names a free slot to try
 * next, or shows every slot held: the contender then watches the semaphore's prefix for deletes from the
 * revision just after that read (a watch of the future, see {@link EtcdQueue#awaitTurn}) and tries the
 * freed slot as soon as etcd reports it. Waiters are not queued: every waiter of a full semaphore wakes
 * on each release and tries the freed slot with one transaction (one commit each), and the first to
 * reach etcd gets it. A cheap read, not a transaction, follows a watch that went quiet.
 *
 * <p>Every slot key's value is {@code "<permits> <lease id>-<sequence> <holder>"}: the number of permits
 * its holder asked for, a name unique to the grant, and the holder text ({@link EtcdLockBackend#holderText},
 * made on the acquiring thread for each put, so it costs no request), which only
 * {@link EtcdPermitInspection} reads; a key of an older Latchkey ends after the name. The number is
 * checked against every slot key that the taking transaction itself read, so a request with another
 * number is refused (its key, if it was put, deleted at once) whenever any permit is held, whatever the
 * client; two grants with different numbers can never both be valid, since the later one's transaction
 * sees the earlier one's key. A mismatched key being removed can make a request of the right number fail
 * too, naming the other number: the mismatch is real, and it is concurrent. The unique part guards the
 * delete of a key whose put had an unknown outcome (a timeout): only that grant's key, never another
 * holder's of that slot. The whole value is what the guard compares, so the holder text changes nothing
 * there, and the number stays first, so a Latchkey that wrote only {@code "<permits> <grant>"} and this
 * one read each other's number of permits alike.
 *
 * <p>The fencing token is the slot key's create revision: every grant of a slot creates its key anew,
 * and etcd never reuses a revision, so tokens grow per slot (and across the semaphore) across clients,
 * restarts and expiries. Nothing else is stored: once no permit is held no key of the semaphore remains.
 *
 * <p>Thread-safe. One client may take several permits of one name concurrently: each attempt reserves
 * the slot it tries in {@link #mine}, so two threads of one client never try the same slot.
 */
final class EtcdSemaphores {

    private static final Logger log = LoggerFactory.getLogger(EtcdSemaphores.class);
    /** Signals of a waiter's watch besides a freed slot's number. */
    private static final int BROKEN = -1;
    private static final int MOVED_ON = -2;
    private static final int DEADLINE = -3;
    /** How many times a contender tries a free slot after its deadline passed before it gives up. */
    private static final int TRIES_PAST_DEADLINE = 3;

    private final EtcdLockBackend backend;
    /** The slots this client holds or is trying, per name: a new attempt tries another. Empty sets are removed. */
    private final ConcurrentHashMap<String, Set<Integer>> mine = new ConcurrentHashMap<>();

    EtcdSemaphores(EtcdLockBackend backend) {
        this.backend = backend;
    }

    /**
     * Takes a permit on the client's current session, waiting until {@code deadline} for a release.
     *
     * @return the permit, or null if every slot stayed held until the deadline
     */
    EtcdPermit attempt(String name, int permits, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        int next = BROKEN; // the slot to try: a freed one, or the lowest this client does not hold
        int pastDeadline = 0;
        while (true) {
            EtcdSession session = backend.session(name, backend.semaphoreSubject(name));
            int slot = reserve(name, permits, next);
            Outcome outcome = null;
            try {
                outcome = take(name, permits, slot, session);
                if (outcome.permit != null) {
                    return granted(outcome.permit, evidence);
                }
            } finally {
                if (slot >= 0 && (outcome == null || outcome.permit == null)) {
                    unreserve(name, slot); // a permit gives its slot back itself, when it ends
                }
            }
            if (deadline.hasPassed() && (outcome.free < 0 || ++pastDeadline > TRIES_PAST_DEADLINE)) {
                return null;
            }
            next = outcome.free >= 0 ? outcome.free : awaitRelease(name, permits, outcome.revision, deadline);
            if (next == DEADLINE) {
                return null; // every slot stayed held until the deadline
            }
        }
    }

    /** What one transaction found: the permit, or a free slot to try next ({@code -1}: none), at a revision. */
    private static final class Outcome {
        final EtcdPermit permit;
        final int free;
        final long revision;

        Outcome(EtcdPermit permit, int free, long revision) {
            this.permit = permit;
            this.free = free;
            this.revision = revision;
        }
    }

    /**
     * Puts slot key {@code slot} if it is absent (or only reads, if {@code slot} is -1), reading every slot
     * key in the same transaction; checks the number of permits against every key read.
     */
    private Outcome take(String name, int permits, int slot, EtcdSession session) throws InterruptedException {
        ByteSequence prefix = EtcdLockBackend.bytes(backend.semaphorePrefix(name));
        GetOption all = GetOption.builder().isPrefix(true).build();
        if (slot < 0) {
            GetResponse r = backend.call(name, backend.semaphoreSubject(name), "reading the slots",
                    backend.client().getKVClient().get(prefix, all));
            return read(name, permits, r.getKvs(), null, null, session, r.getHeader().getRevision());
        }
        ByteSequence key = slotKey(name, slot);
        // made on the acquiring thread for each put: its at= is the moment of the request that grants
        ByteSequence value = EtcdLockBackend.bytes(permits + " " + session.idString() + "-"
                + Long.toHexString(EtcdLockBackend.KEYS.incrementAndGet()) + " " + backend.holderText());
        Supplier<String> what = () -> "taking slot key '" + key.toString(StandardCharsets.UTF_8) + "'"; // for failures only
        TxnResponse r;
        try {
            r = backend.callSettled(name, () -> backend.semaphoreSubject(name), what, backend.client().getKVClient()
                    .txn()
                    .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                    .Then(Op.put(key, value, PutOption.builder().withLeaseId(session.id()).build()), Op.get(prefix, all))
                    .Else(Op.get(prefix, all))
                    .commit());
        } catch (LockException e) {
            if (EtcdErrors.code(e.getCause()) == Status.Code.NOT_FOUND) {
                // the lease expired before a keepalive told: nothing was put, and a new lease is needed
                session.fail("etcd no longer knows lease " + session.idString() + " (NOT_FOUND): it expired or was"
                        + " revoked", e.getCause());
                throw new EtcdQueue.LeaseGone(name, backend.semaphoreSubject(name) + "etcd no longer knew the lease of"
                        + " this client when " + what.get() + "; trying again on a new lease", e.getCause());
            }
            forget(name, session, key, value, e instanceof LockBackendUnavailableException);
            throw e;
        } catch (InterruptedException e) {
            forget(name, session, key, value, false);
            throw e;
        }
        return read(name, permits, r.getGetResponses().get(0).getKvs(), key, value, session, r.getHeader().getRevision());
    }

    /**
     * Makes sense of the slot keys a transaction read at {@code revision}: refuses another number of
     * permits, finds this attempt's own key (put now, or by an earlier try of the same request that etcd
     * applied), or the lowest free slot.
     */
    private Outcome read(String name, int permits, List<KeyValue> slots, ByteSequence key, ByteSequence value,
            EtcdSession session, long revision) {
        KeyValue own = null;
        KeyValue other = null;
        Set<Integer> held = new HashSet<>();
        for (KeyValue kv : slots) {
            if (value != null && kv.getKey().equals(key) && kv.getValue().equals(value)) {
                own = kv;
            } else if (permitsOf(kv) != permits) {
                other = kv;
            }
            held.add(slotOf(kv));
        }
        if (other != null) {
            if (own != null) {
                forget(name, session, key, value, false);
            }
            throw mismatch(backend, name, other, permits);
        }
        if (own != null) {
            int slot = slotOf(own);
            EtcdPermit permit = new EtcdPermit(backend, name, key, session, slot, () -> unreserve(name, slot));
            permit.revision(own.getCreateRevision());
            return new Outcome(permit, -1, revision);
        }
        Set<Integer> reserved = mine.getOrDefault(name, Set.of());
        int free = -1;
        for (int k = 0; k < permits && free < 0; k++) {
            if (!held.contains(k) && !reserved.contains(k)) {
                free = k;
            }
        }
        return new Outcome(null, free, revision);
    }

    /** Hands the permit out: bound to a session that still lives, confirmed by its last keepalive. */
    private EtcdPermit granted(EtcdPermit permit, LeaseEvidence evidence) {
        EtcdSession session = permit.session();
        boolean handedOut = false;
        try {
            if (!session.register(permit)) {
                throw new EtcdQueue.LeaseGone(permit.lockName, permit.subject() + "the etcd lease of this client ended"
                        + " just now: " + session.failure() + "; trying again on a new one", session.failureCause());
            }
            if (!session.usable()) {
                permit.ensureAlive(); // its keepalive is overdue: the session ended just now, try again
            }
            permit.granted(evidence);
            handedOut = true;
            log.debug("{}permit granted: slot {}, key '{}', token {}", permit.subject(), permit.slot(),
                    permit.keyString(), permit.fencingToken());
            return permit;
        } finally {
            if (!handedOut) {
                permit.abandon(true);
            }
        }
    }

    /**
     * Removes the key of an attempt whose outcome is unknown or refused, guarded by its unique value: sent
     * now without waiting, and again at the session's keepalives until etcd confirms.
     */
    private void forget(String name, EtcdSession session, ByteSequence key, ByteSequence value, boolean unreachable) {
        if (unreachable) {
            session.unreachable();
        }
        try {
            session.deleteIfValue(key, value).whenComplete((r, e) -> {
                if (e != null) {
                    session.deleteLaterIfValue(key, value);
                    log.debug("{}could not remove key '{}' of an unfinished attempt ({}); retried at the next"
                            + " keepalive", backend.semaphoreSubject(name), key.toString(StandardCharsets.UTF_8),
                            EtcdErrors.message(e));
                }
            });
        } catch (RuntimeException e) {
            session.deleteLaterIfValue(key, value);
        }
    }

    /**
     * Waits for a slot key of the semaphore to be deleted after {@code seenAt}, watching its prefix from
     * {@code seenAt + 1}; when etcd has already moved on by the time the watch is created, and whenever the
     * watch stays quiet for {@code timeout}, the slots are read again (a read-only transaction, no commit).
     *
     * @return the slot to try next, {@link #BROKEN} to try anew, or {@link #DEADLINE} if the deadline passed
     */
    private int awaitRelease(String name, int permits, long seenAt, Deadline deadline) throws InterruptedException {
        ByteSequence prefix = EtcdLockBackend.bytes(backend.semaphorePrefix(name));
        BlockingQueue<Integer> signals = new LinkedBlockingQueue<>();
        WatchOption deletes = WatchOption.builder().isPrefix(true).withRevision(seenAt + 1).withNoPut(true)
                .withCreateNotify(true).build();
        try (Watch.Watcher ignored = backend.client().getWatchClient().watch(prefix, deletes, Watch.listener(
                response -> {
                    if (response.isCreatedNotify()) {
                        if (response.getHeader().getRevision() > seenAt) {
                            signals.offer(MOVED_ON);
                        }
                        return;
                    }
                    for (WatchEvent e : response.getEvents()) {
                        if (e.getEventType() == WatchEvent.EventType.DELETE) {
                            int slot = slotOf(e.getKeyValue());
                            signals.offer(slot >= 0 && slot < permits ? slot : BROKEN);
                        }
                    }
                },
                error -> signals.offer(BROKEN), // try anew instead of trusting a broken watch
                () -> signals.offer(BROKEN)))) {
            while (true) {
                Integer signal = signals.poll(Math.min(deadline.remainingNanos(), backend.timeout().toNanos()),
                        TimeUnit.NANOSECONDS);
                if (signal == null && deadline.hasPassed()) {
                    return DEADLINE;
                }
                if (signal != null && signal != MOVED_ON) {
                    return signal;
                }
                // etcd moved past the read before the watch began, or the watch went quiet: read now; a delete
                // after this read still comes through the watch
                GetResponse r = backend.call(name, backend.semaphoreSubject(name), "reading the slots",
                        backend.client().getKVClient().get(prefix, GetOption.builder().isPrefix(true).withKeysOnly(true)
                                .build()));
                Set<Integer> held = new HashSet<>(mine.getOrDefault(name, Set.of()));
                r.getKvs().forEach(kv -> held.add(slotOf(kv)));
                for (int k = 0; k < permits; k++) {
                    if (!held.contains(k)) {
                        return k;
                    }
                }
            }
        }
    }

    /**
     * Reserves the slot to try: {@code wanted} if this client neither holds nor tries it, else the lowest
     * such slot; -1 if this client holds or tries every slot (the attempt then only reads).
     */
    private int reserve(String name, int permits, int wanted) {
        int[] chosen = {-1};
        mine.compute(name, (n, set) -> {
            Set<Integer> s = set == null ? ConcurrentHashMap.newKeySet() : set;
            if (wanted >= 0 && wanted < permits && !s.contains(wanted)) {
                chosen[0] = wanted;
            } else {
                for (int k = 0; k < permits && chosen[0] < 0; k++) {
                    if (!s.contains(k)) {
                        chosen[0] = k;
                    }
                }
            }
            if (chosen[0] >= 0) {
                s.add(chosen[0]);
            }
            return s.isEmpty() ? null : s;
        });
        return chosen[0];
    }

    private void unreserve(String name, int slot) {
        mine.computeIfPresent(name, (n, s) -> {
            s.remove(slot);
            return s.isEmpty() ? null : s;
        });
    }

    ByteSequence slotKey(String name, int slot) {
        return EtcdLockBackend.bytes(backend.semaphorePrefix(name) + slot);
    }

    /** The slot of a slot key, from its last segment; -1 if it is none. */
    private static int slotOf(KeyValue kv) {
        String key = kv.getKey().toString(StandardCharsets.UTF_8);
        try {
            return Integer.parseInt(key.substring(key.lastIndexOf('/') + 1));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * The refusal of a request for {@code permits} permits of a semaphore whose slot key {@code other}
     * says another number: the same whether a permit or an inspection asked.
     */
    static IllegalArgumentException mismatch(EtcdLockBackend backend, String name, KeyValue other, int permits) {
        String otherKey = other.getKey().toString(StandardCharsets.UTF_8);
        return new IllegalArgumentException(backend.semaphoreSubject(name) + "it is in use with " + permitsOf(other)
                + " permits in etcd (slot key '" + otherKey + "' says so), and this call asked for " + permits
                + ": every holder of a semaphore must use the same number of permits");
    }

    /**
     * The holder text of a slot key, after its number of permits and its grant's name; null for a value
     * without one (written by a Latchkey before permits carried their holder: {@code "<permits> <grant>"}).
     */
    static String holderOf(KeyValue kv) {
        String value = kv.getValue().toString(StandardCharsets.UTF_8);
        int first = value.indexOf(' ');
        int second = first < 0 ? -1 : value.indexOf(' ', first + 1);
        return second < 0 ? null : value.substring(second + 1);
    }

    /** The number of permits a slot key's holder asked for; -1 if its value says none. */
    static int permitsOf(KeyValue kv) {
        String value = kv.getValue().toString(StandardCharsets.UTF_8);
        int space = value.indexOf(' ');
        try {
            return Integer.parseInt(space < 0 ? value : value.substring(0, space));
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
