package io.latchkey.redis;

import static io.latchkey.redis.RedisScripts.CHECK;
import static io.latchkey.redis.RedisScripts.GRANT;
import static io.latchkey.redis.RedisScripts.LINGER;
import static io.latchkey.redis.RedisScripts.RECORD_SLOT;
import static io.latchkey.redis.RedisScripts.RELEASE;
import static io.latchkey.redis.RedisScripts.redissonChannel;
import static io.latchkey.redis.RedisScripts.tokenKey;
import static io.latchkey.redis.RedisScripts.waitersKey;
import static io.latchkey.redis.RedisScripts.wakeChannel;

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
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.redisson.Redisson;
import org.redisson.api.RFuture;
import org.redisson.api.RScript;
import org.redisson.api.RTopic;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.LongCodec;
import org.redisson.client.codec.StringCodec;
import org.redisson.client.protocol.RedisCommands;
import org.redisson.command.CommandAsyncExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Locks as Redis hashes granted, released and renewed by this class's own scripts, each grant owned by
 * its own owner id rather than by a thread, on the very keys of Redisson's {@code RFencedLock}.
 *
 * <p>Thread-safe. Operations on the server (counted by {@code RedisOperationCountTest}): an
 * uncontended lock+unlock is two script calls, {@link RedisScripts#GRANT} and
 * {@link RedisScripts#RELEASE}. The grant returns the fencing token and the key's remaining life
 * ({@code PTTL}) as read by the same script right after it set it:
 * that is the first confirmation of rule 7, its deadline started from the moment before the grant was
 * sent, which precedes the server's expiry clock. A holder then adds one {@link RedisScripts#CHECK} every
 * {@code (lease - safetyMargin) / 3}: it checks that the key still holds the grant's owner, extends it
 * to the lease and reports its {@code PTTL}; one cadence, one round trip, no Redisson watchdog. A waiter
 * queues in a sorted set beside the lock and listens on the lock's wake channel; a release wakes only
 * the queued waiter whose entry runs out first, so a hand-over costs the release and the woken waiter's
 * grant however many clients wait, where every waiting client of Redisson's {@code RLock} retries.
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
    /** The pace of an acquire's retries while a Redis Cluster cannot serve its slot; see {@link #retryingInCluster}. */
    private static final Duration CLUSTER_PAUSE = Duration.ofMillis(100);

    /**
     * The key of a lock's last completed slot: {@code latchkey_slot:{<lock key>}}, a hash with fields
     * {@code slot} (an ISO-8601 instant) and {@code token}; in the lock key's cluster slot through the
     * hash tag. It outlives the lock on purpose: it is the record of what ran.
     */
    String slotKey(String lockName) {
        return RedisKeys.slotKey(key(lockName), cluster);
    }

    private final RedissonClient redisson;
    private final CommandAsyncExecutor commands;
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
        if (!(redisson instanceof Redisson)) {
            // Only Redisson's own client runs a script with WAIT for replicas (checkLockSyncedSlaves).
            throw new IllegalArgumentException("the Redis backend needs Redisson's own RedissonClient (org.redisson.Redisson);"
                    + " got " + redisson.getClass().getName());
        }
        this.redisson = redisson;
        this.commands = ((Redisson) redisson).getCommandExecutor();
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

    /** The hash field of an owner, as Redisson writes its lock owners: the client's id and the owner id. */
    private String field(long owner) {
        return redisson.getId() + ":" + owner;
    }

    @Override
    public BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        return retryingInCluster(lockName, deadline, () -> acquireOnce(lockName, deadline, evidence));
    }

    /** One acquire, or on a Redis Cluster as many as {@link #transientInCluster} failures need within the wait. */
    private interface Acquire<T> {
        T run() throws InterruptedException;
    }

    /**
     * An acquire on a Redis Cluster tried again, within the caller's wait, when the cluster answered
     * that it cannot serve the lock's slot for the moment: a primary that restarted refuses commands
     * ({@code CLUSTERDOWN}) for its first two seconds, a slot whose keys are split by a resharding is
     * refused ({@code TRYAGAIN}), and after a failover the client sends to the old primary until its next
     * look at the cluster's layout, and a {@code MOVED} to the promoted replica names a node it does not
     * know yet. Each is over within about a second; a waiter would otherwise fail at once, where a
     * single server's waiter keeps waiting for its connection. A grant that failed so never holds the
     * lock: the acquire undoes what it may have written before it throws. Outside a cluster, one acquire.
     */
    private <T> T retryingInCluster(String lockName, Deadline deadline, Acquire<T> acquire) throws InterruptedException {
        while (true) {
            try {
                return acquire.run();
            } catch (LockBackendUnavailableException e) {
                if (!cluster || !transientInCluster(e) || deadline.remainingNanos() <= CLUSTER_PAUSE.toNanos()) {
                    throw e;
                }
                log.debug("lock '{}' ({}): the cluster cannot serve its slot for the moment, trying again: {}",
                        lockName, describe(lockName), e.getMessage());
                Thread.sleep(CLUSTER_PAUSE.toMillis()); // the pace of retries; each attempt has its own bound
            }
        }
    }

    private static boolean transientInCluster(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof org.redisson.client.RedisClusterDownException
                    || t instanceof org.redisson.client.RedisTryAgainException
                    || t instanceof org.redisson.client.RedisNodeNotFoundException) {
                return true;
            }
        }
        return false;
    }

    private BackendLease acquireOnce(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        String key = key(lockName);
        long owner = OWNERS.decrementAndGet();
        String field = field(owner);
        // The caller's bound: the wait plus one timeout for the last round trip.
        Deadline end = deadline.plus(timeout);
        Waiter waiter = null;
        try {
            // Queued by the first attempt already if there is a wait: a release between that attempt and the
            // subscription is caught by the attempt that follows the subscription.
            long queueFor = deadline.hasPassed() ? -1 : Math.max(1, deadline.remainingMillis());
            while (true) {
                if (waiter != null) {
                    waiter.wake.drainPermits(); // a wake-up from now on is news for the attempt below or a later one
                }
                long sentAt = System.nanoTime();
                List<Long> r = attempt(lockName, key, field, queueFor, end);
                long token = r.get(0);
                long ttl = r.get(1);
                if (token >= 0) {
                    evidence.confirmed(sentAt, ttl < 0 ? lease() : Duration.ofMillis(ttl));
                    RedisLease lease = new RedisLease(lockName, key, owner, token, evidence);
                    lease.task = checker.scheduleWithFixedDelay(lease::check, checkPeriodMillis, checkPeriodMillis,
                            TimeUnit.MILLISECONDS);
                    log.debug("lock '{}' ({}) acquired with token {}", lockName, describe(lockName), token);
                    return lease;
                }
                if (queueFor <= 0) {
                    return null; // not queued (no wait), or left the queue (the wait is over)
                }
                if (waiter == null) {
                    waiter = subscribe(lockName, key, field, end);
                } else {
                    // woken by a release naming this owner, else at the holder key's expiry or the end of the wait
                    long sleep = deadline.remainingMillis();
                    if (ttl >= 0) {
                        sleep = Math.min(sleep, Math.max(1, ttl));
                    }
                    waiter.wake.tryAcquire(sleep, TimeUnit.MILLISECONDS);
                }
                queueFor = deadline.hasPassed() ? 0 : Math.max(1, deadline.remainingMillis());
            }
        } catch (InterruptedException | RuntimeException e) {
            leaveQueue(key, field);
            throw e;
        } finally {
            if (waiter != null) {
                waiter.close();
            }
        }
    }

    /** One {@link RedisScripts#GRANT}, bounded by {@link #bound}; never leaves the lock held when given up. */
    private List<Long> attempt(String lockName, String key, String field, long queueFor, Deadline end)
            throws InterruptedException {
        // With replicas Redisson follows the script with WAIT (checkLockSyncedSlaves), as it did for RFencedLock.
        RFuture<List<Long>> pending = commands.syncedEvalNoRetry(key, LongCodec.INSTANCE, RedisCommands.EVAL_LONG_LIST,
                GRANT, List.of(key, tokenKey(key), waitersKey(key)), leaseMillis, field, queueFor, timeout.toMillis());
        String action = "while acquiring lock '" + lockName + "'";
        try {
            return pending.toCompletableFuture().get(bound(end), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            abandon(key, field);
            throw e;
        } catch (TimeoutException e) {
            abandon(key, field);
            throw RedisConfigs.didNotAnswer(lockName, where(lockName), action + " (within the wait plus the timeout)",
                    timeout, e);
        } catch (ExecutionException e) {
            // An attempt that failed after its script ran (no replica acknowledged it, or the answer was lost) may have left the key.
            abandon(key, field);
            throw RedisConfigs.translate(lockName, where(lockName), action, timeout, e);
        }
    }

    /**
     * A round trip's bound: the timeout, within the caller's end, but at least a quarter of the timeout,
     * so that a call made at the very end of the wait, or after this process was paused, still gets its answer.
     */
    private long bound(Deadline end) {
        return Math.max(Math.min(end.remainingNanos(), timeout.toNanos()), timeout.toNanos() / 4);
    }

    /** Makes sure an attempt we stop waiting for never leaves the lock held or this owner queued. */
    private void abandon(String key, String field) {
        release(key, field);
        leaveQueue(key, field);
    }

    private CompletableFuture<Long> release(String key, String field) {
        return redisson.getScript(LongCodec.INSTANCE).<Long>evalAsync(key, RScript.Mode.READ_WRITE, RELEASE,
                RScript.ReturnType.LONG, List.of(key, waitersKey(key), wakeChannel(key), redissonChannel(key)), field)
                .toCompletableFuture();
    }

    /** Best effort: an entry left behind goes stale on its own within the wait it announced plus a timeout. */
    private void leaveQueue(String key, String field) {
        redisson.getScoredSortedSet(waitersKey(key), StringCodec.INSTANCE).removeAsync(field);
    }

    /**
     * Listens on the lock's wake channel for this owner's name. Redisson subscribes its channels again
     * after it reconnects (a restart of the server), so a waiter stays reachable across a restart.
     */
    private Waiter subscribe(String lockName, String key, String field, Deadline end) throws InterruptedException {
        Waiter waiter = new Waiter(redisson.getTopic(wakeChannel(key), StringCodec.INSTANCE));
        RFuture<Integer> f = waiter.topic.addListenerAsync(String.class, (channel, message) -> {
            if (field.equals(message)) {
                waiter.wake.release();
            }
        });
        String action = "while subscribing to the wake-ups of lock '" + lockName + "'";
        try {
            waiter.listener = f.toCompletableFuture().get(bound(end), TimeUnit.NANOSECONDS);
            return waiter;
        } catch (TimeoutException e) {
            f.thenAccept(id -> waiter.topic.removeListenerAsync(id));
            throw RedisConfigs.didNotAnswer(lockName, where(lockName), action, timeout, e);
        } catch (ExecutionException e) {
            throw RedisConfigs.translate(lockName, where(lockName), action, timeout, e);
        } catch (InterruptedException e) {
            f.thenAccept(id -> waiter.topic.removeListenerAsync(id));
            throw e;
        }
    }

    /** A waiting acquire's subscription: one permit per release that named its owner. */
    private static final class Waiter {
        final RTopic topic;
        final Semaphore wake = new Semaphore(0);
        volatile Integer listener;

        Waiter(RTopic topic) {
            this.topic = topic;
        }

        void close() {
            Integer id = listener;
            if (id != null) {
                topic.removeListenerAsync(id); // Redisson unsubscribes when the channel's last listener goes
            }
        }
    }

    private CompletableFuture<Long> check(String key, long owner) {
        RScript script = redisson.getScript(LongCodec.INSTANCE);
        RFuture<Long> f = script.evalAsync(key, RScript.Mode.READ_WRITE, CHECK, RScript.ReturnType.LONG,
                List.of(key), field(owner), leaseMillis);
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
        private final long owner;
        private final long token;
        private final LeaseEvidence evidence;
        private final AtomicBoolean checking = new AtomicBoolean();
        private volatile boolean ended;
        private volatile boolean lostKey;
        volatile ScheduledFuture<?> task;

        RedisLease(String lockName, String key, long owner, long token, LeaseEvidence evidence) {
            this.lockName = lockName;
            this.key = key;
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
                    RScript.ReturnType.LONG, List.of(key), field(owner), token, millis)
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
                    field(owner), token, slot.toString()).toCompletableFuture(),
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
            CompletableFuture<Long> f = RedisLockBackend.this.release(key, field(owner));
            try {
                Long released = f.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
                if (released != null && released == 1) {
                    log.debug("lock '{}' ({}) released", lockName, describe(lockName));
                } else {
                    log.debug("lock '{}' ({}) was no longer held by this lease at release", lockName, describe(lockName));
                }
            } catch (ExecutionException e) {
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
