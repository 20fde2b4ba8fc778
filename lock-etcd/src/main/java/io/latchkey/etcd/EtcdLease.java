package io.latchkey.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import io.grpc.Status;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One contender's etcd lease and its key in the queue of a lock: the key lives exactly as long as the
 * lease, and the lease as long as its keepalives get through.
 *
 * <p>One etcd lease per lock grant rather than one per client session: a lease that ends takes exactly
 * one lock with it, so a keepalive failure or a pause never costs the other locks of the client;
 * releasing is a {@code LeaseRevoke} that removes the key with the lease in one step; an abandoned
 * waiter is cleaned up the same way; and nothing is shared that would have to be rebuilt after
 * {@code NOT_FOUND}. The price is one {@code LeaseGrant} per acquire.
 *
 * <p>Keepalives are sent by this class with {@code keepAliveOnce} every third of the TTL, not through
 * jetcd's {@code Lease.keepAlive} observer: that stream resends every 500 ms while a response is late
 * and does not say which request a response answers, so the moment that precedes the server's renewal
 * (contract rule 7 in docs/contract.md: {@link LeaseEvidence#confirmed}'s {@code sentAtNanos}) cannot be known from it. Here each
 * response answers the one request whose send time was noted. A keepalive that fails, answers
 * {@code NOT_FOUND} (TTL 0) or gets no response within the {@code timeout} option ends the lease: the
 * loss is reported at once rather than retried, since nothing proves the key survived.
 *
 * <p>Thread-safe.
 */
final class EtcdLease implements BackendLease {

    private static final Logger log = LoggerFactory.getLogger(EtcdLease.class);

    private final EtcdLockBackend backend;
    private final String lockName;
    private final ByteSequence key;
    private final long id;
    private final Duration ttl;
    private volatile long revision;

    private ScheduledFuture<?> renewal; // guarded by this
    private boolean inFlight; // guarded by this
    private boolean ended; // guarded by this
    private LeaseEvidence evidence; // guarded by this
    private String failure; // guarded by this
    private Throwable failureCause; // guarded by this
    private CountDownLatch wake; // guarded by this
    private long confirmedAt; // guarded by this: the send time of the last request that showed the lease alive
    private Duration confirmedTtl = Duration.ZERO; // guarded by this: the TTL etcd reported then
    private long slotWrittenAt; // guarded by this: the revision of this grant's last slot record, 0 if none

    EtcdLease(EtcdLockBackend backend, String lockName, ByteSequence key, long id, Duration ttl) {
        this.backend = backend;
        this.lockName = lockName;
        this.key = key;
        this.id = id;
        this.ttl = ttl;
    }

    @Override
    public long fencingToken() {
        return revision;
    }

    ByteSequence key() {
        return key;
    }

    String keyString() {
        return key.toString(StandardCharsets.UTF_8);
    }

    long id() {
        return id;
    }

    void revision(long revision) {
        this.revision = revision;
    }

    synchronized void startKeepalive(ScheduledExecutorService executor) {
        long period = Math.max(100, ttl.toMillis() / 3);
        renewal = executor.scheduleWithFixedDelay(() -> keepAlive(executor), period, period, TimeUnit.MILLISECONDS);
    }

    private void keepAlive(ScheduledExecutorService executor) {
        synchronized (this) {
            if (ended || failure != null || inFlight) {
                return;
            }
            inFlight = true;
        }
        long sentAt = System.nanoTime();
        CompletableFuture<LeaseKeepAliveResponse> answer;
        try {
            answer = backend.client().getLeaseClient().keepAliveOnce(id);
        } catch (RuntimeException e) {
            fail("sending a keepalive for lease " + Long.toHexString(id) + " failed: " + EtcdErrors.message(e), e);
            return;
        }
        String what = "renewing lease " + Long.toHexString(id) + " of key '" + keyString() + "'";
        ScheduledFuture<?> deadline = executor.schedule(() -> answer.completeExceptionally(new TimeoutException(
                "no keepalive response within " + Durations.format(backend.timeout()))), backend.timeout().toNanos(),
                TimeUnit.NANOSECONDS);
        answer.whenComplete((r, e) -> {
            deadline.cancel(false);
            synchronized (this) {
                inFlight = false;
            }
            if (e == null && r.getTTL() > 0) {
                confirmed(sentAt, Duration.ofSeconds(r.getTTL()));
            } else if (e == null || EtcdErrors.code(e) == Status.Code.NOT_FOUND) {
                fail("etcd no longer knows lease " + Long.toHexString(id) + " (NOT_FOUND): it expired", e);
            } else if (e instanceof TimeoutException || e.getCause() instanceof TimeoutException) {
                fail(backend.silent(null, what, sentAt, backend.timeout(), e).getMessage(), e);
            } else {
                fail(backend.failed(null, what, sentAt, backend.timeout(), e).getMessage(), e);
            }
        });
    }

    private void confirmed(long sentAt, Duration serverTtl) {
        LeaseEvidence target;
        synchronized (this) {
            target = ended || failure != null ? null : evidence;
            if (target != null) {
                confirmedAt = sentAt;
                confirmedTtl = serverTtl;
            }
        }
        if (target != null) {
            target.confirmed(sentAt, serverTtl);
        }
    }

    private void fail(String reason, Throwable cause) {
        LeaseEvidence target;
        synchronized (this) {
            if (ended || failure != null) {
                return;
            }
            failure = reason;
            failureCause = cause;
            if (renewal != null) {
                renewal.cancel(false);
            }
            if (wake != null) {
                wake.countDown();
            }
            target = evidence;
        }
        if (target != null) {
            target.lost(reason, cause);
        } else {
            log.debug("lock '{}': lease of waiting key '{}' ended: {}", lockName, keyString(), reason);
        }
    }

    /** Reports the grant: the lease was alive {@code serverTtl} from a moment after {@code sentAt}. */
    void granted(LeaseEvidence evidence, long sentAt, Duration serverTtl) {
        evidence.confirmed(sentAt, serverTtl);
        String lostMeanwhile;
        Throwable cause;
        synchronized (this) {
            this.evidence = evidence;
            confirmedAt = sentAt;
            confirmedTtl = serverTtl;
            lostMeanwhile = failure;
            cause = failureCause;
        }
        if (lostMeanwhile != null) {
            evidence.lost(lostMeanwhile, cause);
        }
    }

    /** Throws if the lease ended while the contender waited: its key may be gone with it. */
    synchronized void ensureAlive() {
        if (failure != null) {
            throw new LockBackendUnavailableException(lockName, "lock '" + lockName + "' (" + backend.describe(lockName)
                    + "): the etcd lease of key '" + keyString() + "' ended while waiting: " + failure, failureCause);
        }
    }

    /** Counts {@code latch} down if the lease ends while it is set. */
    synchronized void wakeOnLoss(CountDownLatch latch) {
        wake = latch;
        if (latch != null && failure != null) {
            latch.countDown();
        }
    }

    @Override
    public void release() {
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
            if (renewal != null) {
                renewal.cancel(false);
            }
        }
        try {
            // revoking deletes the key with the lease; the key is this contender's own, never another holder's
            backend.callUninterruptibly(lockName, "revoking lease " + Long.toHexString(id),
                    backend.client().getLeaseClient().revoke(id));
        } catch (LockException e) {
            if (EtcdErrors.code(e.getCause()) != Status.Code.NOT_FOUND) {
                throw e;
            }
        }
    }

    /**
     * Removes a waiter's key with its lease, logging instead of throwing.
     *
     * @param wait whether to wait (at most the timeout) for etcd to confirm, or only send the revoke
     */
    void revoke(boolean wait) {
        if (!wait) {
            synchronized (this) {
                if (ended) {
                    return;
                }
                ended = true;
                if (renewal != null) {
                    renewal.cancel(false);
                }
            }
            backend.client().getLeaseClient().revoke(id).whenComplete((r, e) -> {
                if (e != null && EtcdErrors.code(e) != Status.Code.NOT_FOUND) {
                    log.debug("lock '{}': could not remove waiting key '{}' ({}); it expires with its lease within {}",
                            lockName, keyString(), EtcdErrors.message(e), Durations.format(ttl));
                }
            });
            return;
        }
        try {
            release();
        } catch (RuntimeException e) {
            log.warn("lock '{}': could not remove waiting key '{}' ({}); it expires with its lease within {}",
                    lockName, keyString(), e.getMessage(), Durations.format(ttl));
        }
    }

    /**
     * Hands {@code atLeast} to etcd's own expiry, so that the lock stays taken for {@code remaining} even
     * if this process exits: keepalives stop, and the key is bound to a fresh lease whose TTL is
     * {@code remaining} rounded up to whole seconds (or etcd's minimum TTL, if that is longer), with a
     * transaction that keeps the key's create revision, hence the fencing token, and only if the key is
     * still this grant's. The old lease is then revoked. etcd frees the lock when the new lease expires:
     * no earlier than {@code remaining} after the grant request was sent, and at most a second and the
     * expiry check ({@value EtcdLockProvider#EXPIRY_CHECK_MILLIS} ms) later. When the lease already
     * confirmed outlives {@code remaining} by less than a second, stopping the keepalives is enough.
     */
    @Override
    public boolean releaseAfter(Duration remaining) {
        long now = System.nanoTime();
        long confirmedEnd;
        synchronized (this) {
            if (ended) {
                return true;
            }
            ended = true;
            if (renewal != null) {
                renewal.cancel(false);
            }
            if (failure != null) {
                return true; // the lease is gone or going: there is nothing left to keep
            }
            confirmedEnd = confirmedAt + confirmedTtl.toNanos();
        }
        long spare = confirmedEnd - (now + remaining.toNanos());
        if (spare >= 0 && spare < TimeUnit.SECONDS.toNanos(1)) {
            log.debug("lock '{}': key '{}' left to expire with its lease for atLeast, {} from now", lockName, keyString(),
                    Durations.format(remaining));
            return true;
        }
        long seconds = Math.max(1, (remaining.toMillis() + 999) / 1000);
        String what = "handing the atLeast bound of " + Durations.format(remaining) + " to a lease of " + seconds + "s";
        long newLease = backend.callUninterruptibly(lockName, what,
                backend.client().getLeaseClient().grant(seconds, backend.timeout().toMillis(), TimeUnit.MILLISECONDS)).getID();
        TxnResponse moved = backend.callUninterruptibly(lockName, what, backend.client().getKVClient().txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)))
                .Then(Op.put(key, EtcdLockBackend.bytes(lockName), PutOption.builder().withLeaseId(newLease).build()))
                .commit());
        long drop = moved.isSucceeded() ? id : newLease;
        try {
            backend.callUninterruptibly(lockName, "revoking lease " + Long.toHexString(drop),
                    backend.client().getLeaseClient().revoke(drop));
        } catch (LockException e) {
            if (EtcdErrors.code(e.getCause()) != Status.Code.NOT_FOUND) {
                // the key is safe either way: it is bound to the new lease, or gone; the other lease expires
                log.debug("lock '{}': could not revoke lease {} ({}); it expires on its own", lockName,
                        Long.toHexString(drop), e.getMessage());
            }
        }
        log.debug("lock '{}': key '{}' {} for atLeast", lockName, keyString(),
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
