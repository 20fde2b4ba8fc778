package io.latchkey.redis;

import io.latchkey.spi.LeaseEvidence;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a held lock, permit and read-write grant share: the owner id and fencing token of the grant, and one check
 * every check period that checks the owner, extends the key to the lease and reports its {@code PTTL} to the
 * evidence; silence is not loss, an owner gone is. Every grant of a backend is checked with the others held through
 * it, one script per hash slot ({@link RedisRenewals}), and only its answer comes back here.
 *
 * <p>Thread-safe: the checks run on the backend's checker thread, a release on the holder's; the state they share
 * is volatile or atomic.
 */
abstract class RedisRenewed {

    // RedisLockBackend's logger, as when the leases were nested in it: a logging configuration for it still covers them.
    static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

    final RedisLockBackend backend;
    final LeaseEvidence evidence;
    /** The owner id the key holds while this grant lasts. */
    final long owner;
    final long token;
    private final AtomicBoolean checking = new AtomicBoolean();
    volatile boolean ended;
    volatile boolean lostKey;
    /** When this grant is due for its next check, on {@link System#nanoTime}; guarded by {@link RedisRenewals}. */
    long due;

    RedisRenewed(RedisLockBackend backend, LeaseEvidence evidence, long owner, long token) {
        this.backend = backend;
        this.evidence = evidence;
        this.owner = owner;
        this.token = token;
    }

    /** The grant's fencing token: {@code BackendLease} and {@code PermitLease} alike. */
    public final long fencingToken() {
        return token;
    }

    /** The check of this grant alone; its answer is the key's PTTL, or -3 if the key no longer holds the owner. */
    abstract CompletableFuture<Long> renew();

    /** A key of this grant: the hash slot of all its keys, where its check is sent. */
    abstract String routingKey();

    /**
     * Adds this grant's check to a {@link RedisScripts#CHECK_ALL} of its hash slot: its keys to {@code keys}, its kind
     * and its arguments to {@code args}.
     */
    abstract void addCheck(List<Object> keys, List<Object> args);

    /** What is held, for the log: {@code lock 'x' (redis key '...')}. */
    abstract String subject();

    /** Why the key no longer holding the owner means loss. */
    abstract String lostReason();

    /** Starts the checks: this grant joins its backend's. */
    final void start() {
        backend.renewals.add(this);
    }

    /**
     * Whether a check may be sent now: not once the grant ended, nor while the previous check has not come back (it
     * will be counted as silence). If so, the caller sends one and hands its answer to {@link #answered}.
     */
    final boolean beginCheck() {
        return !ended && checking.compareAndSet(false, true);
    }

    /** The answer to a check sent at {@code sentAt}: the key's PTTL, -3 if it no longer holds the owner, or a failure. */
    final void answered(long sentAt, Long ttl, Throwable e) {
        checking.set(false);
        if (ended) {
            return;
        }
        if (e != null) {
            // Silence is not loss: the validity deadline runs out on its own if this goes on.
            log.debug("ownership check of {} failed: {}", subject(), e.toString());
        } else if (ttl != -3) {
            evidence.confirmed(sentAt, ttl < 0 ? backend.lease() : Duration.ofMillis(ttl));
        } else {
            ended = true;
            lostKey = true;
            stopChecks();
            evidence.lost(lostReason(), null);
        }
    }

    /** Ends the checks: this grant leaves its backend's. */
    final void stopChecks() {
        backend.renewals.remove(this);
    }
}
