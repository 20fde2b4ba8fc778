package io.latchkey.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Txn;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.grpc.Status;
import io.latchkey.spi.Durations;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one etcd lease of a lock client, kept alive for every key of the client: held locks and waiting
 * contenders alike are bound to it, so a grant costs no {@code LeaseGrant} and a release no
 * {@code LeaseRevoke}.
 *
 * <p>Keepalives are sent with {@code keepAliveOnce} every third of the TTL, not through jetcd's
 * {@code Lease.keepAlive} observer: that stream resends every 500 ms while a response is late and does
 * not say which request a response answers, so the moment that precedes the server's renewal (contract
 * rule 7 in docs/contract.md: {@link io.latchkey.spi.LeaseEvidence#confirmed}'s {@code sentAtNanos})
 * cannot be known from it. Here each response answers the one request whose send time was noted, and
 * every key of the session gets that confirmation. A keepalive that fails, answers {@code NOT_FOUND}
 * (TTL 0) or gets no response within the {@code timeout} option ends the session, and with it every
 * lock of the client: nothing proves the lease survived, and every key of the client lives exactly as
 * long as it. The keepalives stop at once, so etcd expires the lease within its TTL, and the next
 * acquire grants a new session.
 *
 * <p>A keepalive renews the lease, and says nothing of a key deleted on the server while the lease lives
 * (a force release of another client): with each keepalive, {@link EtcdGrantCheck} reads the keys of the
 * plain locks held a renewal period or longer and reports those gone as lost.
 *
 * <p>A key whose delete could not reach etcd (a release during a short outage) would live as long as
 * the session: it is deleted again at every keepalive until etcd confirms, or goes with the lease.
 *
 * <p>Thread-safe.
 */
final class EtcdSession {

    private static final Logger log = LoggerFactory.getLogger(EtcdSession.class);
    /** How many lock prefixes keep a deleted key name to reuse ({@link #newKey}): the hot locks of a client. */
    static final int REUSED_PREFIXES = 64;

    private final EtcdLockBackend backend;
    private final long id;
    private final Duration ttl;
    private final long marginNanos;
    private final ScheduledExecutorService executor;
    private final ScheduledFuture<?> renewal;
    private final long periodNanos;
    private final EtcdGrantCheck check;

    private final Set<EtcdLease> keys = new LinkedHashSet<>(); // guarded by this
    private final Set<Pending> undeleted = new LinkedHashSet<>(); // guarded by this
    /** Per key prefix, the last key name whose delete etcd confirmed; the {@value #REUSED_PREFIXES} prefixes last used. */
    private final Map<String, ByteSequence> deletedKeys = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, ByteSequence> eldest) {
            return size() > REUSED_PREFIXES;
        }
    }; // guarded by this
    private boolean inFlight; // guarded by this
    private boolean closed; // guarded by this
    private boolean unreachable; // guarded by this: a call through the session could not reach etcd since the last keepalive
    private String failure; // guarded by this
    private Throwable failureCause; // guarded by this
    private long confirmedAt; // guarded by this: the send time of the last request that showed the lease alive
    private Duration confirmedTtl; // guarded by this: the TTL etcd reported then

    /**
     * A session on lease {@code id}, granted by a request sent at {@code sentAt} that reported {@code ttl};
     * starts its keepalives on {@code executor}.
     */
    EtcdSession(EtcdLockBackend backend, long id, Duration ttl, long sentAt, Duration marginOfSafety,
            ScheduledExecutorService executor) {
        this.backend = backend;
        this.id = id;
        this.ttl = ttl;
        this.marginNanos = marginOfSafety.toNanos();
        this.confirmedAt = sentAt;
        this.confirmedTtl = ttl;
        this.executor = executor;
        long period = Math.max(100, ttl.toMillis() / 3);
        this.periodNanos = TimeUnit.MILLISECONDS.toNanos(period);
        this.check = new EtcdGrantCheck(backend, executor);
        this.renewal = executor.scheduleWithFixedDelay(this::keepAlive, period, period, TimeUnit.MILLISECONDS);
    }

    long id() {
        return id;
    }

    String idString() {
        return Long.toHexString(id);
    }

    Duration ttl() {
        return ttl;
    }

    /**
     * Whether a new key may be bound to this session: it has not ended, and its last confirmation still
     * covers now after the safety margin. A session whose keepalive is overdue that far would hand out
     * grants that are invalid on arrival, so it is ended here (its keys are reported lost no later than
     * their own deadlines, which are the same).
     */
    boolean usable() {
        synchronized (this) {
            if (failure != null || closed) {
                return false;
            }
            if (System.nanoTime() - (confirmedAt + confirmedTtl.toNanos() - marginNanos) < 0) {
                return true;
            }
        }
        fail("no keepalive of lease " + idString() + " was answered within its TTL less the safety margin", null);
        return false;
    }

    /**
     * A key name for a new grant under {@code keyPrefix}: {@code <keyPrefix><lease id>-<sequence>}, a name
     * of this session's whose delete etcd confirmed if there is one (see {@link #keyDeleted}), else a new
     * sequence.
     *
     * <p>Why names are reused: etcd keeps a deleted key in its index until the next compaction, and a
     * queue's read ranges over the prefix sorted by create revision, which visits every key name the
     * prefix ever had since then. A new name per grant makes a lock taken 5,000 times cost 5,000 visits
     * per acquire; a reused name adds a generation to one entry (jetcd's {@code Lock} keeps one name per
     * lease for the same reason). It is safe: the name is reused only after etcd answered that the
     * key with the old grant's create revision is deleted, by one acquisition at a time (it is taken out
     * of the map), and only this session creates keys with its lease id in the name; so a key of that
     * name that an acquire finds in place was put by that acquire itself, as with a name used once.
     */
    ByteSequence newKey(String keyPrefix) {
        ByteSequence reused;
        synchronized (this) {
            reused = deletedKeys.remove(keyPrefix);
        }
        return reused != null ? reused : EtcdLockBackend.bytes(keyPrefix + idString() + "-"
                + Long.toHexString(EtcdLockBackend.KEYS.incrementAndGet()));
    }

    /** etcd confirmed the delete of {@code key}: its name may serve the next {@link #newKey} of its prefix. */
    void keyDeleted(ByteSequence key) {
        String name = key.toString(StandardCharsets.UTF_8);
        String keyPrefix = name.substring(0, name.lastIndexOf('/') + 1);
        synchronized (this) {
            if (!closed) {
                deletedKeys.put(keyPrefix, key);
            }
        }
    }

    /** Adds {@code key} to the keys that live and die with this session; false if it already ended. */
    synchronized boolean register(EtcdLease key) {
        if (failure != null || closed) {
            return false;
        }
        keys.add(key);
        return true;
    }

    synchronized void unregister(EtcdLease key) {
        keys.remove(key);
    }

    /** The last confirmation: its send time and the TTL etcd reported, for a key granted now. */
    synchronized long confirmedAt() {
        return confirmedAt;
    }

    synchronized Duration confirmedTtl() {
        return confirmedTtl;
    }

    /** Why the session ended, or null while it lives. */
    synchronized String failure() {
        return failure;
    }

    synchronized Throwable failureCause() {
        return failureCause;
    }

    /** A call through this session could not reach etcd: closing will not wait for a revoke. */
    synchronized void unreachable() {
        unreachable = true;
    }

    /** {@link #delete} at the next keepalives, until etcd confirms. */
    void deleteLater(ByteSequence key, long revision) {
        deleteLater(new Pending(key, revision, null));
    }

    /** {@link #deleteIfValue} at the next keepalives, until etcd confirms. */
    void deleteLaterIfValue(ByteSequence key, ByteSequence value) {
        deleteLater(new Pending(key, 0, value));
    }

    private synchronized void deleteLater(Pending pending) {
        if (failure == null && !closed) {
            undeleted.add(pending);
        }
    }

    /**
     * A delete still to confirm, guarded by the key's create revision or else by its value (a slot key's
     * value is unique to its grant, its name is not), or by neither; one per grant, not per key name.
     */
    private record Pending(ByteSequence key, long revision, ByteSequence value) {
        Cmp guard() {
            return revision != 0 ? new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision))
                    : value != null ? new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(value)) : null;
        }
    }

    /** {@link #deleteLater(ByteSequence, long)} once {@code delay} has passed: the key is to stay until then. */
    void deleteLater(ByteSequence key, long revision, Duration delay) {
        try {
            executor.schedule(() -> deleteLater(key, revision), delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the client is closing: revoking the lease removes the key now, or it expires with it
        }
    }

    private void keepAlive() {
        List<EtcdLease> held;
        synchronized (this) {
            if (closed || failure != null || inFlight) {
                return;
            }
            inFlight = true;
            held = new ArrayList<>(keys);
        }
        long sentAt = System.nanoTime();
        // the keepalive renews the lease, not a key that was deleted on the server: read the older grants' keys
        held.removeIf(key -> !EtcdGrantCheck.due(key, sentAt - periodNanos));
        check.send(held);
        CompletableFuture<LeaseKeepAliveResponse> answer;
        try {
            answer = backend.client().getLeaseClient().keepAliveOnce(id);
        } catch (RuntimeException e) {
            fail("sending a keepalive for lease " + idString() + " failed: " + EtcdErrors.message(e), e);
            return;
        }
        String what = "renewing lease " + idString();
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
                deleteUndeleted();
            } else if (e == null || EtcdErrors.code(e) == Status.Code.NOT_FOUND) {
                fail("etcd no longer knows lease " + idString() + " (NOT_FOUND): it expired or was revoked", e);
            } else if (e instanceof TimeoutException || e.getCause() instanceof TimeoutException) {
                fail(backend.silent(null, what, sentAt, backend.timeout(), e).getMessage(), e);
            } else {
                fail(backend.failed(null, what, sentAt, backend.timeout(), e).getMessage(), e);
            }
        });
    }

    private void confirmed(long sentAt, Duration serverTtl) {
        List<EtcdLease> targets;
        synchronized (this) {
            if (closed || failure != null) {
                return;
            }
            confirmedAt = sentAt;
            confirmedTtl = serverTtl;
            unreachable = false;
            targets = new ArrayList<>(keys);
        }
        for (EtcdLease key : targets) {
            key.confirmed(sentAt, serverTtl);
        }
    }

    /** Ends the session and every key bound to it; the first reason wins. */
    void fail(String reason, Throwable cause) {
        List<EtcdLease> targets;
        synchronized (this) {
            if (closed || failure != null) {
                return;
            }
            failure = reason;
            failureCause = cause;
            renewal.cancel(false);
            undeleted.clear();
            targets = new ArrayList<>(keys);
            keys.clear();
        }
        log.debug("etcd lease {} of this client ended ({} keys bound to it): {}", idString(), targets.size(), reason);
        for (EtcdLease key : targets) {
            key.sessionEnded(reason, cause);
        }
    }

    private void deleteUndeleted() {
        List<Pending> pending;
        synchronized (this) {
            if (undeleted.isEmpty()) {
                return;
            }
            pending = new ArrayList<>(undeleted);
        }
        pending.forEach(p -> delete(p.key(), p.guard()).whenComplete((r, e) -> {
            if (e == null) {
                synchronized (this) {
                    undeleted.remove(p);
                }
                log.debug("key '{}' deleted after its release could not reach etcd", p.key().toString(StandardCharsets.UTF_8));
            }
        }));
    }

    /**
     * Deletes {@code key} if it still has create revision {@code revision}; any key of that name if
     * {@code revision} is 0 (a put whose outcome is unknown: the name is the grant's alone). One Raft commit.
     */
    CompletableFuture<TxnResponse> delete(ByteSequence key, long revision) {
        return delete(key, new Pending(key, revision, null).guard());
    }

    /** Deletes {@code key} if it still has {@code value}. One Raft commit. */
    CompletableFuture<TxnResponse> deleteIfValue(ByteSequence key, ByteSequence value) {
        return delete(key, new Pending(key, 0, value).guard());
    }

    private CompletableFuture<TxnResponse> delete(ByteSequence key, Cmp guard) {
        Txn txn = backend.client().getKVClient().txn();
        if (guard != null) {
            txn = txn.If(guard);
        }
        return txn.Then(Op.delete(key, DeleteOption.DEFAULT)).commit();
    }

    /**
     * Stops the keepalives and revokes the lease, which removes every key still bound to it. Waits at
     * most {@code timeout} for etcd, and not at all once a call through the session found etcd
     * unreachable (the lease then expires within its TTL).
     */
    void close() {
        boolean wait;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            renewal.cancel(false);
            wait = failure == null && !unreachable;
            keys.clear();
            undeleted.clear();
        }
        CompletableFuture<?> revoke;
        try {
            revoke = backend.client().getLeaseClient().revoke(id);
        } catch (RuntimeException e) {
            log.debug("could not revoke etcd lease {} ({}); it expires within {}", idString(), EtcdErrors.message(e),
                    Durations.format(ttl));
            return;
        }
        if (!wait) {
            return;
        }
        try {
            revoke.get(backend.timeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            if (EtcdErrors.code(e) != Status.Code.NOT_FOUND) {
                log.debug("could not revoke etcd lease {} ({}); it expires within {}", idString(), EtcdErrors.message(e),
                        Durations.format(ttl));
            }
        }
    }

    @Override
    public String toString() {
        return "EtcdSession{lease=" + idString() + ", ttl=" + ttl.getSeconds() + "s}";
    }
}
