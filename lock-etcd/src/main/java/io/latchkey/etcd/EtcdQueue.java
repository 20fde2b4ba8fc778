package io.latchkey.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
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
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The queue of one lock name in etcd, as {@link EtcdLockBackend} describes it: queueing a contender's
 * key with the read of its predecessor in one transaction, and waiting for its turn by watching only
 * that predecessor. Stateless apart from its backend; thread-safe.
 *
 * <p>What blocks a contender is the key with the highest create revision below its own under
 * {@link EtcdLease#blockers()}: for a lock, the whole queue; for a read-write lock's reader, only the
 * writers' keys ({@link EtcdReadWrite}). The queue is otherwise the same for both.
 */
final class EtcdQueue {

    private static final Logger log = LoggerFactory.getLogger(EtcdQueue.class);

    private final EtcdLockBackend backend;

    EtcdQueue(EtcdLockBackend backend) {
        this.backend = backend;
    }

    /**
     * Takes the grant of {@code lease}'s key on its session: queues it, waits for its turn until
     * {@code deadline}, and reports the grant to {@code evidence}. A contender that does not get the
     * grant (the deadline passed, an error, an interrupt) deletes its key at once, so it can never become
     * the holder later.
     *
     * @return {@code lease}, granted, or null if the deadline passed while waiting
     */
    <L extends EtcdLease> L take(L lease, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        EtcdSession session = lease.session();
        if (!session.register(lease)) {
            throw new LockBackendUnavailableException(lease.lockName, lease.subject() + "the etcd lease of this client"
                    + " ended just now: " + session.failure() + "; trying again on a new one", session.failureCause());
        }
        boolean handedOut = false;
        boolean unreachable = false;
        try {
            Ahead predecessor = enqueue(lease);
            if (predecessor != null && !awaitTurn(lease, predecessor, deadline)) {
                return null;
            }
            if (!session.usable()) {
                lease.ensureAlive(); // the session ended while waiting, or its keepalive is overdue: try again
            }
            lease.granted(evidence);
            handedOut = true;
            log.debug("{}granted: key '{}', token {}", lease.subject(), lease.keyString(), lease.fencingToken());
            return lease;
        } catch (LockBackendUnavailableException e) {
            unreachable = true;
            throw e;
        } finally {
            if (!handedOut) {
                // an abandoned waiter must never become the holder later: its key goes now, not with the lease;
                // towards an unreachable etcd the delete is only sent, and sent again at the next keepalives
                lease.abandon(!unreachable);
            }
        }
    }

    /**
     * Puts this contender's key, bound to the session's lease, and reads in the same transaction the
     * newest two keys under its {@linkplain EtcdLease#blockers() blockers}: the newest other than its own
     * is the key that blocks it, or there is none and this contender holds the grant now. One Raft
     * commit; a free lock needs no other request. etcd refuses the put if the lease no longer exists
     * ("requested lease not found"), so a key is never bound to a lease that etcd has already revoked.
     */
    private Ahead enqueue(EtcdLease lease) throws InterruptedException {
        ByteSequence key = lease.key();
        // the transaction's own put is the newest key of all: every key read was created before it, and
        // the newest two hold the nearest blocker even when this key is among them (a lock's queue)
        GetOption lastTwo = GetOption.builder().isPrefix(true).withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.DESCEND).withLimit(2).withKeysOnly(true).build();
        ByteSequence blockers = EtcdLockBackend.bytes(lease.blockers());
        TxnResponse r;
        try {
            r = backend.callSettled(lease.lockName, lease::subject, () -> "queueing key '" + lease.keyString() + "'",
                    backend.client().getKVClient().txn()
                            .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                            .Then(Op.put(key, lease.value(),
                                    PutOption.builder().withLeaseId(lease.session().id()).build()), Op.get(blockers, lastTwo))
                            .Else(Op.get(key, GetOption.DEFAULT))
                            .commit());
        } catch (LockException e) {
            if (EtcdErrors.code(e.getCause()) == Status.Code.NOT_FOUND) {
                // the lease expired before a keepalive told: every key of the session is gone with it
                lease.session().fail("etcd no longer knows lease " + lease.session().idString()
                        + " (NOT_FOUND): it expired or was revoked", e.getCause());
                throw new LeaseGone(lease.lockName, lease.subject() + "etcd no longer knew the lease of this client"
                        + " when key '" + lease.keyString() + "' was queued; trying again on a new lease", e.getCause());
            }
            throw e;
        }
        if (!r.isSucceeded()) {
            // a retry of a put that had been applied: the key name is this grant's alone, so the key is ours
            lease.revision(r.getGetResponses().get(0).getKvs().get(0).getCreateRevision());
            return predecessor(lease);
        }
        long revision = r.getHeader().getRevision();
        lease.revision(revision);
        for (KeyValue kv : r.getGetResponses().get(0).getKvs()) {
            if (!kv.getKey().equals(key)) {
                return new Ahead(kv, revision);
            }
        }
        return null;
    }

    /** The key queued just before a contender's, and the revision at which a read found it there. */
    static final class Ahead {
        final KeyValue key;
        final long seenAt;

        Ahead(KeyValue key, long seenAt) {
            this.key = key;
            this.seenAt = seenAt;
        }
    }

    /** etcd refused to bind a key to the client's lease: it expired or was revoked, so a new one is needed. */
    static final class LeaseGone extends LockBackendUnavailableException {
        private static final long serialVersionUID = 1L;

        LeaseGone(String lockName, String message, Throwable cause) {
            super(lockName, message, cause);
        }
    }

    /**
     * Reads the key that blocks this contender (the newest of its blockers created before it) in one
     * read-only transaction (no Raft commit) that also requires this contender's key to still have its
     * create revision: a waiter is granted only if its key, and with it the lease, survived the wait
     * (etcd issue 11456).
     *
     * @return the predecessor, or null if this contender holds the grant now
     */
    private Ahead predecessor(EtcdLease lease) throws InterruptedException {
        GetOption before = GetOption.builder().isPrefix(true).withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.DESCEND).withMaxCreateRevision(lease.fencingToken() - 1).withLimit(1)
                .withKeysOnly(true).build();
        TxnResponse r = backend.call(lease.lockName, lease.subject(), "reading the queue", backend.client().getKVClient()
                .txn()
                .If(new Cmp(lease.key(), Cmp.Op.EQUAL, CmpTarget.createRevision(lease.fencingToken())))
                .Then(Op.get(EtcdLockBackend.bytes(lease.blockers()), before))
                .commit());
        if (!r.isSucceeded()) {
            // unavailable, so that acquire tries again while the caller still waits
            throw new LockBackendUnavailableException(lease.lockName, lease.subject() + "the key '" + lease.keyString()
                    + "' vanished while waiting, so its lease expired or it was deleted by hand; the lock was not"
                    + " granted, try again", null);
        }
        List<KeyValue> kvs = r.getGetResponses().get(0).getKvs();
        return kvs.isEmpty() ? null : new Ahead(kvs.get(0), r.getHeader().getRevision());
    }

    /**
     * Waits until none of this contender's blockers has a lower create revision than its own key,
     * watching only the one that blocks it (no herd).
     *
     * <p>The watch starts at the revision just after the read that showed the predecessor alive, so a
     * delete in between is never missed, and it is then, in the common case, a watch of the future:
     * etcd sends it every event at once. A watch that starts at a revision etcd has already passed is
     * a catching-up ("unsynced") watch instead, which etcd serves only from a loop that runs every
     * 100 ms: starting at the predecessor's own mod revision, long past, made every hand-over to a
     * freshly queued waiter wait up to 100 ms for that loop. When etcd has moved on by the time the
     * watch is created (its created notice carries a later revision: the predecessor's delete, or any
     * other write), the predecessor is read again at once, so a delete in that gap is seen without
     * waiting for the catching-up watch.
     *
     * @return false if the deadline passed first
     */
    boolean awaitTurn(EtcdLease lease, Ahead predecessor, Deadline deadline) throws InterruptedException {
        Watch watch = backend.client().getWatchClient();
        Ahead before = predecessor;
        while (before != null) {
            lease.ensureAlive();
            if (deadline.hasPassed()) {
                return false;
            }
            long seenAt = before.seenAt;
            BlockingQueue<Boolean> signals = new LinkedBlockingQueue<>(); // TRUE: re-read; FALSE: etcd moved on
            lease.wakeOnLoss(() -> signals.offer(Boolean.TRUE));
            WatchOption deletes = WatchOption.builder().withRevision(seenAt + 1).withNoPut(true)
                    .withCreateNotify(true).build();
            Ahead next = null;
            boolean reread = true;
            try (Watch.Watcher ignored = watch.watch(before.key.getKey(), deletes, Watch.listener(
                    response -> {
                        if (response.isCreatedNotify()) {
                            if (response.getHeader().getRevision() > seenAt) {
                                signals.offer(Boolean.FALSE);
                            }
                        } else if (response.getEvents().stream()
                                .anyMatch(e -> e.getEventType() == WatchEvent.EventType.DELETE)) {
                            signals.offer(Boolean.TRUE);
                        }
                    },
                    error -> signals.offer(Boolean.TRUE), // re-read instead of trusting a broken watch
                    () -> signals.offer(Boolean.TRUE)))) {
                while (true) {
                    // the watch is a shortcut: re-reading every timeout also covers a watch that went quiet
                    Boolean signal = signals.poll(Math.min(deadline.remainingNanos(), backend.timeout().toNanos()),
                            TimeUnit.NANOSECONDS);
                    if (signal == null || signal) {
                        break;
                    }
                    // etcd moved past the read before the watch was created: read again now, not when it catches up
                    lease.ensureAlive();
                    next = predecessor(lease);
                    if (next == null || !next.key.getKey().equals(before.key.getKey())) {
                        reread = false; // the predecessor is gone already
                        break;
                    }
                    // still there: its delete comes at a later revision, which this watch reports
                }
            } finally {
                lease.wakeOnLoss(null);
            }
            lease.ensureAlive();
            before = reread ? predecessor(lease) : next;
        }
        return true;
    }
}
