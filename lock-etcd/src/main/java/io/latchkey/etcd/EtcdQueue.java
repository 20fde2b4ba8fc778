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
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The queue of one lock name in etcd, as {@link EtcdLockBackend} describes it: queueing a contender's
 * key with the read of its predecessor in one transaction, and waiting for its turn by watching only
 * that predecessor. Stateless apart from its backend; thread-safe.
 */
final class EtcdQueue {

    private final EtcdLockBackend backend;

    EtcdQueue(EtcdLockBackend backend) {
        this.backend = backend;
    }

    /**
     * Puts this contender's key, bound to the session's lease, and reads in the same transaction the key
     * queued just before it: the holder's key, or null if this contender holds the lock now. One Raft
     * commit; a free lock needs no other request. etcd refuses the put if the lease no longer exists
     * ("requested lease not found"), so a key is never bound to a lease that etcd has already revoked.
     */
    Ahead enqueue(String lockName, EtcdLease lease) throws InterruptedException {
        ByteSequence key = lease.key();
        // the newest two keys of the queue: this one (the transaction's own put is the newest) and its predecessor
        GetOption lastTwo = GetOption.builder().isPrefix(true).withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.DESCEND).withLimit(2).withKeysOnly(true).build();
        ByteSequence queue = EtcdLockBackend.bytes(backend.prefix(lockName));
        TxnResponse r;
        try {
            r = backend.call(lockName, "queueing key '" + lease.keyString() + "'", backend.client().getKVClient().txn()
                    .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                    .Then(Op.put(key, EtcdLockBackend.bytes(lockName),
                            PutOption.builder().withLeaseId(lease.session().id()).build()), Op.get(queue, lastTwo))
                    .Else(Op.get(key, GetOption.DEFAULT))
                    .commit());
        } catch (LockException e) {
            if (EtcdErrors.code(e.getCause()) == Status.Code.NOT_FOUND) {
                // the lease expired before a keepalive told: every key of the session is gone with it
                lease.session().fail("etcd no longer knows lease " + lease.session().idString()
                        + " (NOT_FOUND): it expired or was revoked", e.getCause());
                throw new LeaseGone(lockName, backend.subject(lockName) + "etcd no longer knew the lease of this client"
                        + " when key '" + lease.keyString() + "' was queued; trying again on a new lease", e.getCause());
            }
            throw e;
        }
        if (!r.isSucceeded()) {
            // a retry of a put that had been applied: the key name is this grant's alone, so the key is ours
            lease.revision(r.getGetResponses().get(0).getKvs().get(0).getCreateRevision());
            return predecessor(lockName, lease);
        }
        long revision = r.getHeader().getRevision();
        lease.revision(revision);
        List<KeyValue> newest = r.getGetResponses().get(0).getKvs();
        return newest.size() < 2 ? null : new Ahead(newest.get(1), revision);
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
     * Reads the key queued just before this contender's in one read-only transaction (no Raft commit)
     * that also requires this contender's key to still have its create revision: a waiter is granted
     * the lock only if its key, and with it the lease, survived the wait (etcd issue 11456).
     *
     * @return the predecessor, or null if this contender holds the lock now
     */
    private Ahead predecessor(String lockName, EtcdLease lease) throws InterruptedException {
        GetOption before = GetOption.builder().isPrefix(true).withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.DESCEND).withMaxCreateRevision(lease.fencingToken() - 1).withLimit(1)
                .withKeysOnly(true).build();
        TxnResponse r = backend.call(lockName, "reading the queue", backend.client().getKVClient().txn()
                .If(new Cmp(lease.key(), Cmp.Op.EQUAL, CmpTarget.createRevision(lease.fencingToken())))
                .Then(Op.get(EtcdLockBackend.bytes(backend.prefix(lockName)), before))
                .commit());
        if (!r.isSucceeded()) {
            // unavailable, so that acquire tries again while the caller still waits
            throw new LockBackendUnavailableException(lockName, backend.subject(lockName) + "the key '" + lease.keyString()
                    + "' vanished while waiting, so its lease expired or it was deleted by hand; the lock was not"
                    + " granted, try again", null);
        }
        List<KeyValue> kvs = r.getGetResponses().get(0).getKvs();
        return kvs.isEmpty() ? null : new Ahead(kvs.get(0), r.getHeader().getRevision());
    }

    /**
     * Waits until no key of the lock has a lower create revision than this contender's, watching only
     * the key just before it (no herd).
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
    boolean awaitTurn(String lockName, EtcdLease lease, Ahead predecessor, Deadline deadline)
            throws InterruptedException {
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
                    next = predecessor(lockName, lease);
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
            before = reread ? predecessor(lockName, lease) : next;
        }
        return true;
    }
}
