package io.latchkey.redis;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Durations;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.LockBackend;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.redisson.RedissonFencedLock;
import org.redisson.api.RFencedLock;
import org.redisson.api.RFuture;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.LongCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Locks as Redisson {@link RFencedLock}s taken with an explicit lease time, each grant owned by its own
 * owner id rather than by a thread, renewed and confirmed by this class alone.
 *
 * <p>Thread-safe. Redisson's watchdog would renew the key silently and stop just as silently when it
 * finds the key gone, and a second renewer on the same key only doubles the traffic and Redisson's error
 * logs; so the key is taken with {@code leaseTime = lease} (Redisson then schedules no renewal) and
 * every {@code (lease - safetyMargin) / 3} one script of this backend checks that the key still holds
 * the grant's owner id, extends it to the lease, reads how long it lives ({@code PTTL}), and reports
 * that as evidence: one cadence, one round trip.
 */
final class RedisLockBackend implements LockBackend {

    private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

    /** Default key prefix when the namespace option is not set. */
    static final String DEFAULT_NAMESPACE = "latchkey";

    /**
     * Owner ids are negative, so they never equal the id of a thread that locks through the same
     * RedissonClient with Redisson's own thread-owned API; shared by every client of the JVM for the same reason.
     */
    private static final AtomicLong OWNERS = new AtomicLong();
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    /**
     * The renewal and the confirmation in one: if the key still holds the owner's field, extends it to
     * the lease (ARGV[2] ms) and returns its remaining life in ms; else -3.
     */
    private static final String CHECK = "if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then "
            + "redis.call('pexpire', KEYS[1], ARGV[2]); return redis.call('pttl', KEYS[1]) end; return -3";

    /**
     * atLeast handed to Redis: if the key still holds the owner's field, swaps that field for one no
     * owner has (so that no late release or renewal of this owner touches it) and lets the key expire in
     * ARGV[3] ms. Returns 1, or 0 if the key no longer holds the owner.
     */
    private static final String LINGER = "if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then "
            + "redis.call('hdel', KEYS[1], ARGV[1]); redis.call('hset', KEYS[1], 'latchkey:atLeast', ARGV[2]); "
            + "redis.call('pexpire', KEYS[1], ARGV[3]); return 1 end; return 0";

    /**
     * Once per slot: records ARGV[3] in the slot hash (KEYS[2]) only if the lock key (KEYS[1]) still
     * holds the owner's field and no higher token (ARGV[2]) wrote the record. Returns 1, or 0 if refused.
     */
    private static final String RECORD_SLOT = "if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return 0 end; "
            + "local t = redis.call('hget', KEYS[2], 'token'); "
            + "if t and tonumber(t) > tonumber(ARGV[2]) then return 0 end; "
            + "redis.call('hset', KEYS[2], 'token', ARGV[2], 'slot', ARGV[3]); return 1";

    /**
     * The key of a lock's last completed slot: {@code latchkey_slot:{<lock key>}}, a hash with fields
     * {@code slot} (an ISO-8601 instant) and {@code token}; in the lock key's cluster slot through the
     * hash tag. It outlives the lock on purpose: it is the record of what ran.
     */
    String slotKey(String lockName) {
        return RedisKeys.slotKey(key(lockName), cluster);
    }

    private final RedissonClient redisson;
    private final boolean ownsClient;
    private final String prefix;
    private final Duration timeout;
    private final String server;
    private final long leaseMillis;
    private final long checkPeriodMillis;
    private final ScheduledThreadPoolExecutor checker;
    /** On a Redis Cluster a lock key with a brace gets a hash tag of its own; see {@link RedisKeys}. */
    private final boolean cluster;

    RedisLockBackend(RedissonClient redisson, boolean ownsClient, LockOptions options, String server) {
        this.redisson = redisson;
        this.cluster = redisson.getConfig().isClusterConfig();
        this.ownsClient = ownsClient;
        this.prefix = (options.namespace() == null ? DEFAULT_NAMESPACE : options.namespace()) + ":";
        this.timeout = options.timeout();
        this.server = server;
        this.leaseMillis = options.lease().toMillis();
        // One cadence for renewal and confirmation: a confirmation keeps the lease valid for
        // (lease - safetyMargin); three renewals fit in that, so one or two lost answers do not end a healthy lease.
        this.checkPeriodMillis = Math.max(1, (leaseMillis - options.safetyMargin().toMillis()) / 3);
        this.checker = new ScheduledThreadPoolExecutor(1,
                DaemonThreads.factory("latchkey-redis-" + INSTANCES.incrementAndGet() + "-check"));
        this.checker.setRemoveOnCancelPolicy(true);
    }

    /** The lease: the time to live this backend gives the lock keys and renews. */
    Duration lease() {
        return Duration.ofMillis(leaseMillis);
    }

    /** The key and the server, for messages of this backend's own: the lock's key, the URI once. */
    private String where(String lockName) {
        return describe(lockName) + " on " + server;
    }

    String key(String lockName) {
        return RedisKeys.lockKey(prefix, lockName, cluster);
    }

    @Override
    public String describe(String lockName) {
        return "redis key '" + key(lockName) + "'";
    }

    @Override
    public BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        String key = key(lockName);
        RedissonFencedLock lock = fencedLock(key);
        long owner = OWNERS.decrementAndGet();
        long waitMillis = deadline.remainingMillis();
        // The caller's bound: the wait plus one timeout, for the acquire and its confirmation together.
        Deadline end = deadline.plus(timeout);
        // An explicit lease time: Redisson schedules no watchdog renewal for the key; our check renews it.
        RFuture<Long> pending = lock.tryLockAndGetTokenAsync(waitMillis, leaseMillis, TimeUnit.MILLISECONDS, owner);
        String action = "while acquiring lock '" + lockName + "'";
        Long token;
        try {
            token = pending.get(end.remainingNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            abandon(lock, pending, owner);
            throw e;
        } catch (TimeoutException e) {
            abandon(lock, pending, owner);
            throw RedisConfigs.didNotAnswer(lockName, where(lockName), action + " (within the wait plus the timeout)",
                    timeout, e);
        } catch (ExecutionException e) {
            // An acquire that failed after its script ran (no replica acknowledged it, or the answer was lost) may have left the key.
            abandon(lock, pending, owner);
            throw RedisConfigs.translate(lockName, where(lockName), action, timeout, e);
        }
        if (token == null) {
            return null;
        }
        long sentAt = System.nanoTime();
        // The confirmation shares the caller's bound with the acquire, but gets at least a quarter of the
        // timeout, so that a grant that came in late is not thrown away for want of time.
        long checkBound = Math.max(end.remainingNanos(), timeout.toNanos() / 4);
        Long ttl;
        try {
            ttl = check(key, owner).get(Math.min(checkBound, timeout.toNanos()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            lock.unlockAsync(owner);
            throw e;
        } catch (TimeoutException e) {
            lock.unlockAsync(owner);
            throw RedisConfigs.didNotAnswer(lockName, where(lockName), "while confirming the grant of lock '" + lockName + "'",
                    timeout, e);
        } catch (ExecutionException e) {
            lock.unlockAsync(owner);
            throw RedisConfigs.translate(lockName, where(lockName),
                    "while confirming the grant of lock '" + lockName + "'", timeout, e);
        }
        if (ttl == -3) {
            throw new LockException(lockName, "lock '" + lockName + "' (" + where(lockName) + ") was granted with token "
                    + token + " but the key no longer named this owner right after; it expired or was deleted."
                    + " Check that nothing else writes keys under the namespace");
        }
        evidence.confirmed(sentAt, ttl < 0 ? lease() : Duration.ofMillis(ttl));
        RedisLease lease = new RedisLease(lockName, key, lock, owner, token, evidence);
        lease.task = checker.scheduleWithFixedDelay(lease::check, checkPeriodMillis, checkPeriodMillis,
                TimeUnit.MILLISECONDS);
        log.debug("lock '{}' ({}) acquired with token {}", lockName, describe(lockName), token);
        return lease;
    }

    private RedissonFencedLock fencedLock(String key) {
        RFencedLock lock = redisson.getFencedLock(key);
        if (!(lock instanceof RedissonFencedLock)) {
            // Only Redisson's class lets an owner id other than the calling thread take the lock.
            throw new IllegalArgumentException("the Redis backend needs Redisson's own RedissonClient, whose fenced locks"
                    + " are RedissonFencedLock; got " + lock.getClass().getName() + " for key '" + key + "'");
        }
        return (RedissonFencedLock) lock;
    }

    /** Makes sure an acquire we stop waiting for never leaves the lock held. */
    private static void abandon(RedissonFencedLock lock, RFuture<Long> pending, long owner) {
        // Cancelled before it completed: Redisson unlocks itself if the acquire still succeeds.
        CompletableFuture<Long> f = pending.toCompletableFuture();
        if (!pending.cancel(false) && f.isDone() && !f.isCompletedExceptionally() && f.getNow(null) == null) {
            return; // it ended with "not acquired"
        }
        lock.unlockAsync(owner); // also stops a renewal an acquire may have scheduled
    }

    private CompletableFuture<Long> check(String key, long owner) {
        RScript script = redisson.getScript(LongCodec.INSTANCE);
        RFuture<Long> f = script.evalAsync(key, RScript.Mode.READ_WRITE, CHECK, RScript.ReturnType.LONG,
                List.of(key), redisson.getId() + ":" + owner, leaseMillis);
        return f.toCompletableFuture();
    }

    @Override
    public void close() {
        checker.shutdownNow();
        try {
            checker.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (ownsClient) {
            // No quiet period: nothing of ours is in flight once every lease is released.
            redisson.shutdown(0, Math.max(2000, timeout.toMillis()), TimeUnit.MILLISECONDS);
        }
    }

    /** One grant: its owner id, its token and the periodic ownership check. */
    private final class RedisLease implements BackendLease {
        private final String lockName;
        private final String key;
        private final RedissonFencedLock lock;
        private final long owner;
        private final long token;
        private final LeaseEvidence evidence;
        private final AtomicBoolean checking = new AtomicBoolean();
        private volatile boolean ended;
        private volatile boolean lostKey;
        volatile ScheduledFuture<?> task;

        RedisLease(String lockName, String key, RedissonFencedLock lock, long owner, long token, LeaseEvidence evidence) {
            this.lockName = lockName;
            this.key = key;
            this.lock = lock;
            this.owner = owner;
            this.token = token;
            this.evidence = evidence;
        }

        @Override
        public long fencingToken() {
            return token;
        }

        void check() {
            if (ended || !checking.compareAndSet(false, true)) {
                return; // the previous check has not come back yet: it will be counted as silence
            }
            long sentAt = System.nanoTime();
            RedisLockBackend.this.check(key, owner).whenComplete((ttl, e) -> {
                checking.set(false);
                if (ended) {
                    return;
                }
                if (e != null) {
                    // Silence is not loss: the validity deadline runs out on its own if this goes on.
                    log.debug("ownership check of lock '{}' ({}) failed: {}", lockName, describe(lockName), e.toString());
                } else if (ttl != -3) {
                    evidence.confirmed(sentAt, ttl < 0 ? lease() : Duration.ofMillis(ttl));
                } else {
                    ended = true;
                    lostKey = true;
                    stopChecks();
                    evidence.lost(describe(lockName) + " no longer holds this lease's owner id: it expired"
                            + " (renewal failed for longer than the lease), was deleted, or a failover promoted a replica"
                            + " that never received the grant", null);
                }
            });
        }

        private void stopChecks() {
            ScheduledFuture<?> t = task;
            if (t != null) {
                t.cancel(false);
            }
        }

        /** atLeast by the key's own expiry: it outlives this process, and nothing renews it any more. */
        @Override
        public boolean releaseAfter(Duration remaining) {
            ended = true;
            stopChecks();
            if (lostKey) {
                return true;
            }
            long millis = Math.max(1, (remaining.toNanos() + 999_999) / 1_000_000);
            Long kept = await(redisson.getScript(LongCodec.INSTANCE).<Long>evalAsync(key, RScript.Mode.READ_WRITE, LINGER,
                    RScript.ReturnType.LONG, List.of(key), redisson.getId() + ":" + owner, token, millis)
                    .toCompletableFuture(), "while handing the atLeast bound of lock '" + lockName + "' to the key's expiry");
            log.debug("lock '{}' ({}) {} for its atLeast bound, {} ms", lockName, describe(lockName),
                    kept == 1 ? "left to expire" : "was no longer held", millis);
            return true;
        }

        @Override
        public boolean recordsSlots() {
            return true;
        }

        @Override
        public java.util.Optional<java.time.Instant> lastCompletedSlot() {
            String slotKey = slotKey(lockName);
            Object slot = await(redisson.getScript(org.redisson.client.codec.StringCodec.INSTANCE).<Object>evalAsync(slotKey,
                    RScript.Mode.READ_ONLY, "return redis.call('hget', KEYS[1], 'slot')", RScript.ReturnType.VALUE,
                    List.of(slotKey)).toCompletableFuture(), "while reading the last completed slot of lock '" + lockName + "'");
            return slot == null ? java.util.Optional.empty() : java.util.Optional.of(java.time.Instant.parse(slot.toString()));
        }

        @Override
        public void recordCompletedSlot(java.time.Instant slot) {
            Long written = await(redisson.getScript(LongCodec.INSTANCE).<Long>evalAsync(key, RScript.Mode.READ_WRITE,
                    RECORD_SLOT, RScript.ReturnType.LONG, List.of(key, slotKey(lockName)),
                    redisson.getId() + ":" + owner, token, slot.toString()).toCompletableFuture(),
                    "while recording slot " + slot + " of lock '" + lockName + "'");
            if (written != 1) {
                throw new io.latchkey.LockLostException(lockName, "lock '" + lockName + "' (" + describe(lockName)
                        + ") refused to record slot " + slot + " for token " + token + ": the key no longer holds this"
                        + " lease, or a later holder recorded a slot; the slot may run again elsewhere");
            }
        }

        private <T> T await(CompletableFuture<T> f, String what) {
            try {
                return f.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (ExecutionException e) {
                throw RedisConfigs.translate(lockName, where(lockName), what, timeout, e);
            } catch (TimeoutException e) {
                throw RedisConfigs.didNotAnswer(lockName, where(lockName), what, timeout, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockException(lockName, "interrupted " + what + " (" + where(lockName) + ")", e);
            }
        }

        @Override
        public void release() {
            ended = true;
            stopChecks();
            if (lostKey) {
                return; // the key holds someone else or nothing
            }
            String what = "while releasing lock '" + lockName + "' (it expires on its own within "
                    + Durations.format(lease()) + ")";
            RFuture<Void> f = lock.unlockAsync(owner);
            try {
                f.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
                log.debug("lock '{}' ({}) released", lockName, describe(lockName));
            } catch (ExecutionException e) {
                Throwable cause = RedisConfigs.unwrap(e);
                if (cause instanceof IllegalMonitorStateException) {
                    log.debug("lock '{}' ({}) was no longer held by this lease at release", lockName, describe(lockName));
                    return;
                }
                throw RedisConfigs.translate(lockName, where(lockName), what, timeout, e);
            } catch (TimeoutException e) {
                throw RedisConfigs.didNotAnswer(lockName, where(lockName), what, timeout, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockException(lockName, "interrupted " + what + " (" + where(lockName) + ")", e);
            }
        }
    }
}
