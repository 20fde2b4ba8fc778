package io.latchkey.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockLostException;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LeaseEvidence;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One contender's key in the queue of a lock, bound to the client's {@link EtcdSession}: the key lives
 * as long as that lease, and the lease as long as its keepalives get through.
 *
 * <p>The key's name ({@code <lease id>-<sequence>}) is this grant's alone while the key may exist, so no
 * later acquire of the client ever finds it and takes it for its own: not a key whose release is still
 * being retried, nor one left to etcd's expiry for {@code atLeast}. Only once etcd confirmed its delete
 * may the name serve the session's next grant of the same lock ({@link EtcdSession#newKey} says why).
 * Releasing deletes the key in a transaction guarded by its create revision (the fencing token), one
 * Raft commit; the lease stays for the client's other keys. An abandoned waiter is removed the same way.
 *
 * <p>Thread-safe.
 */
class EtcdLease implements BackendLease {

    private static final Logger log = LoggerFactory.getLogger(EtcdLease.class);

    final EtcdLockBackend backend;
    final String lockName;
    private final ByteSequence key;
    private final EtcdSession session;
    private final String holder;
    private volatile long revision;

    private boolean ended; // guarded by this
    private LeaseEvidence evidence; // guarded by this
    private String failure; // guarded by this
    private Throwable failureCause; // guarded by this
    private Runnable wake; // guarded by this
    private long slotWrittenAt; // guarded by this: the revision of this grant's last slot record, 0 if none
    private long grantedAt; // guarded by this: System.nanoTime() when the grant was reported, once evidence is set

    /**
     * @param holder the holder text ({@link io.latchkey.spi.HolderStamp}) that {@link EtcdQueue} puts as
     *     the key's value, made on the acquiring thread; null for a permit, whose slot key's value
     *     {@link EtcdSemaphores} writes
     */
    EtcdLease(EtcdLockBackend backend, String lockName, ByteSequence key, EtcdSession session, String holder) {
        this.backend = backend;
        this.lockName = lockName;
        this.key = key;
        this.session = session;
        this.holder = holder;
    }

    @Override
    public long fencingToken() {
        return revision;
    }

    ByteSequence key() {
        return key;
    }

    /** The key's value: the holder text, written in the request that queues the key, so it costs no request. */
    ByteSequence value() {
        return EtcdLockBackend.bytes(holder);
    }

    String keyString() {
        return key.toString(StandardCharsets.UTF_8);
    }

    EtcdSession session() {
        return session;
    }

    void revision(long revision) {
        this.revision = revision;
    }

    /** A keepalive of the session answered: the key lives {@code serverTtl} from a moment after {@code sentAt}. */
    void confirmed(long sentAt, Duration serverTtl) {
        LeaseEvidence target;
        synchronized (this) {
            target = ended || failure != null ? null : evidence;
        }
        if (target != null) {
            target.confirmed(sentAt, serverTtl);
        }
    }

    /** The session's lease ended, and this key with it (or soon, at etcd's expiry). */
    void sessionEnded(String reason, Throwable cause) {
        lose(reason, cause);
    }

    /**
     * Whether {@link EtcdGrantCheck} reads this key at the session's renewals: a plain lock's grant, the
     * only kind that another client can end ({@link EtcdAdmin#forceRelease}).
     */
    boolean checkedAtRenewal() {
        return true;
    }

    /** Whether this key is a grant held since {@code nanos} ({@link System#nanoTime()}) or earlier, and not lost. */
    synchronized boolean heldSince(long nanos) {
        return evidence != null && !ended && failure == null && grantedAt - nanos <= 0;
    }

    /**
     * {@link EtcdGrantCheck} found this grant's key gone while the session's lease lives: it was deleted on
     * the server, by a force release or by hand, so the grant ended there.
     */
    void deletedOnServer() {
        lose("key '" + keyString() + "' of this grant (token " + revision + ") was deleted on the etcd server while"
                + " its lease was still alive: the grant was ended there, for example by a force release"
                + " (forceRelease) from another client, and another client may hold the lock now; stop using what it"
                + " guards and acquire the lock again", null);
    }

    private void lose(String reason, Throwable cause) {
        LeaseEvidence target;
        synchronized (this) {
            if (ended || failure != null) {
                return;
            }
            failure = reason;
            failureCause = cause;
            if (wake != null) {
                wake.run();
            }
            target = evidence;
        }
        if (target != null) {
            target.lost(reason, cause);
        } else {
            log.debug("{}lease of waiting key '{}' ended: {}", subject(), keyString(), reason);
        }
    }

    /**
     * Reports the grant with the session's last confirmation: the key was put while the lease existed and
     * lives as long as it, so it is there for at least that confirmation's TTL from its send time.
     */
    void granted(LeaseEvidence evidence) {
        String lostMeanwhile;
        Throwable cause;
        synchronized (this) {
            this.evidence = evidence;
            grantedAt = System.nanoTime();
            lostMeanwhile = failure;
            cause = failureCause;
        }
        // after publishing the evidence: a keepalive answered meanwhile is forwarded, or read here
        evidence.confirmed(session.confirmedAt(), session.confirmedTtl());
        if (lostMeanwhile != null) {
            evidence.lost(lostMeanwhile, cause);
        }
    }

    /** {@code "lock 'name' (etcd key prefix '...'): "}: what this key is held for, first in messages. */
    String subject() {
        return backend.subject(lockName);
    }

    /**
     * The key prefix under which a key created before this one keeps it waiting, see {@link EtcdQueue}:
     * for a lock, its whole queue.
     */
    String blockers() {
        return backend.prefix(lockName);
    }

    /** Called once when this handle ends its part in the session (released, abandoned or handed to {@code atLeast}). */
    void ended() {
    }

    /** Throws if the session ended while the contender waited: its key is gone with it, or going. */
    synchronized void ensureAlive() {
        if (failure != null) {
            throw new LockBackendUnavailableException(lockName, subject() + "the etcd lease of key '" + keyString()
                    + "' ended while waiting: " + failure, failureCause);
        }
    }

    /** Runs {@code wakeUp} (which must not block) if the session ends while it is set, or has ended. */
    synchronized void wakeOnLoss(Runnable wakeUp) {
        wake = wakeUp;
        if (wakeUp != null && failure != null) {
            wakeUp.run();
        }
    }

    /** Ends this handle's part in the session; true the first time. */
    private boolean end() {
        synchronized (this) {
            if (ended) {
                return false;
            }
            ended = true;
        }
        session.unregister(this);
        ended();
        return true;
    }

    @Override
    public void release() {
        if (!end()) {
            return;
        }
        delete(true);
    }

    /**
     * Deletes the key if it still has this grant's create revision: never a key of another grant. When
     * etcd cannot be reached the session deletes it later (at its next keepalives), or the key goes
     * with the lease.
     *
     * @param wait whether to wait (at most the timeout) for etcd to confirm, and throw if it did not
     */
    private void delete(boolean wait) {
        long rev = revision; // 0 if the put's outcome is unknown: the name is this grant's alone
        CompletableFuture<TxnResponse> deleted;
        try {
            deleted = session.delete(key, rev);
        } catch (RuntimeException e) {
            session.deleteLater(key, rev);
            throw e;
        }
        if (!wait) {
            deleted.whenComplete((r, e) -> {
                if (e != null) {
                    session.deleteLater(key, rev);
                    log.debug("{}could not remove waiting key '{}' ({}); retried at the next keepalive",
                            subject(), keyString(), EtcdErrors.message(e));
                }
            });
            return;
        }
        try {
            if (backend.callUninterruptibly(lockName, this::subject, () -> "deleting key '" + keyString() + "'", deleted)
                    .isSucceeded()) {
                deleteConfirmed();
            }
        } catch (LockException e) {
            session.deleteLater(key, rev);
            if (e instanceof LockBackendUnavailableException) {
                session.unreachable();
            }
            throw e;
        }
    }

    /**
     * etcd confirmed that this grant's key, with its create revision, is deleted: the name may serve this
     * session's next key under the same prefix ({@link EtcdSession#newKey}). A permit's slot key has a
     * fixed name and keeps it.
     */
    void deleteConfirmed() {
        session.keyDeleted(key);
    }

    /**
     * Removes a waiter's key, logging instead of throwing.
     *
     * @param wait whether to wait (at most the timeout) for etcd to confirm, or only send the delete
     */
    void abandon(boolean wait) {
        if (!end()) {
            return;
        }
        try {
            delete(wait);
        } catch (RuntimeException e) {
            log.warn("{}could not remove waiting key '{}' ({}); it is deleted again at the next keepalive,"
                    + " or expires with its lease within {}", subject(), keyString(), e.getMessage(),
                    Durations.format(session.ttl()));
        }
    }

    /**
     * Hands {@code atLeast} to etcd's own expiry, so that the lock stays taken for {@code remaining} even
     * if this process exits: the key is bound to a lease of its own whose TTL is {@code remaining}
     * rounded up to whole seconds (or etcd's minimum TTL, if that is longer), never kept alive, with a
     * transaction that keeps the key's create revision, hence the fencing token, and its value, the
     * holder, and only if the key is still this grant's. The client's session goes on for its other keys. etcd frees the lock when the
     * new lease expires: no earlier than {@code remaining} after the grant request was sent, and at most
     * a second and the expiry check ({@value EtcdLockProvider#EXPIRY_CHECK_MILLIS} ms) later.
     */
    @Override
    public boolean releaseAfter(Duration remaining) {
        String lostAlready;
        synchronized (this) {
            lostAlready = ended ? "" : failure;
        }
        if (!end()) {
            return true;
        }
        if (lostAlready != null) {
            return true; // the lease is gone or going: there is nothing left to keep
        }
        long seconds = Math.max(1, (remaining.toMillis() + 999) / 1000);
        String what = "handing the atLeast bound of " + Durations.format(remaining) + " to a lease of " + seconds + "s";
        long newLease;
        TxnResponse moved;
        try {
            newLease = backend.callUninterruptibly(lockName, subject(), what, backend.client().getLeaseClient()
                    .grant(seconds, backend.timeout().toMillis(), TimeUnit.MILLISECONDS)).getID();
            moved = backend.callUninterruptibly(lockName, subject(), what, backend.client().getKVClient().txn()
                    .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)))
                    .Then(Op.put(key, value(), PutOption.builder().withLeaseId(newLease).build()))
                    .commit());
        } catch (LockException e) {
            // the key may still be bound to the session: it must not outlive atLeast by the whole session
            session.deleteLater(key, revision, remaining);
            throw e;
        }
        if (!moved.isSucceeded()) {
            try {
                backend.callUninterruptibly(lockName, subject(), "revoking lease " + Long.toHexString(newLease),
                        backend.client().getLeaseClient().revoke(newLease));
            } catch (LockException e) {
                // nothing is bound to it; it expires on its own within seconds
                log.debug("{}could not revoke lease {} ({}); it expires on its own", subject(),
                        Long.toHexString(newLease), e.getMessage());
            }
        }
        log.debug("{}key '{}' {} for atLeast", subject(), keyString(),
                moved.isSucceeded() ? "bound to a lease of " + seconds + "s" : "was no longer held");
        return true;
    }

    @Override
    public boolean recordsSlots() {
        return true;
    }

    /** Reads the slot key next to the lock's queue, see {@link EtcdLockBackend#slotKey}. */
    @Override
    public Optional<Instant> lastCompletedSlot() {
        GetResponse r = backend.callUninterruptibly(lockName, "reading the last completed slot",
                backend.client().getKVClient().get(backend.slotKey(lockName)));
        return r.getKvs().isEmpty() ? Optional.empty()
                : Optional.of(Instant.parse(r.getKvs().get(0).getValue().toString(StandardCharsets.UTF_8)));
    }

    /**
     * Records {@code slot} in one transaction guarded by the fencing token: the lock key must still have
     * this grant's create revision (so its lease is alive and no later holder exists), and the slot key
     * must not have been written since this grant began (its mod revision below the token, or this
     * grant's own last record).
     */
    @Override
    public void recordCompletedSlot(Instant slot) {
        ByteSequence slotKey = backend.slotKey(lockName);
        long ownWrite;
        synchronized (this) {
            ownWrite = slotWrittenAt;
        }
        Cmp untouched = ownWrite == 0 ? new Cmp(slotKey, Cmp.Op.LESS, CmpTarget.modRevision(revision))
                : new Cmp(slotKey, Cmp.Op.EQUAL, CmpTarget.modRevision(ownWrite));
        TxnResponse r = backend.callUninterruptibly(lockName, "recording slot " + slot, backend.client().getKVClient().txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)), untouched)
                .Then(Op.put(slotKey, EtcdLockBackend.bytes(slot.toString()), PutOption.DEFAULT))
                .commit());
        if (!r.isSucceeded()) {
            throw new LockLostException(lockName, backend.subject(lockName) + "etcd refused to record slot " + slot
                    + " for token " + revision + ": key '" + keyString() + "' is gone with its lease, or a later holder"
                    + " recorded a slot; the slot may run again elsewhere");
        }
        synchronized (this) {
            slotWrittenAt = r.getHeader().getRevision();
        }
    }

    @Override
    public String toString() {
        return "EtcdLease{lock='" + lockName + "', key='" + keyString() + "', token=" + revision + '}';
    }
}
