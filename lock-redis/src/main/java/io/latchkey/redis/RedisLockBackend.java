package io.latchkey.redis;

import static io.latchkey.redis.RedisErrors.didNotAnswer;
import static io.latchkey.redis.RedisErrors.orPaused;
import static io.latchkey.redis.RedisErrors.transientInCluster;
import static io.latchkey.redis.RedisErrors.translate;
import static io.latchkey.redis.RedisKeys.PERMIT_KEY_HEAD;
import static io.latchkey.redis.RedisKeys.permitKeyTail;
import static io.latchkey.redis.RedisKeys.redissonChannel;
import static io.latchkey.redis.RedisKeys.semaphoreKey;
import static io.latchkey.redis.RedisKeys.semaphoreTag;
import static io.latchkey.redis.RedisKeys.semaphoreTokenKey;
import static io.latchkey.redis.RedisKeys.semaphoreWaitersKey;
import static io.latchkey.redis.RedisKeys.semaphoreWakeChannel;
import static io.latchkey.redis.RedisKeys.tokenKey;
import static io.latchkey.redis.RedisKeys.waitersKey;
import static io.latchkey.redis.RedisKeys.wakeChannel;
import static io.latchkey.redis.RedisScripts.GRANT;
import static io.latchkey.redis.RedisScripts.PERMIT_GRANT;
import static io.latchkey.redis.RedisScripts.PERMIT_RELEASE;
import static io.latchkey.redis.RedisScripts.RELEASE;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.redis.RedisContender.Contention;
import io.latchkey.redis.RedisContender.Granted;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.GrantRecord;
import io.latchkey.spi.HolderStamp;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.PermitLease;
import io.latchkey.spi.ReadWriteBackend;
import io.latchkey.spi.ReadWriteRecords;
import io.latchkey.spi.SemaphoreBackend;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.redisson.Redisson;
import org.redisson.api.RFuture;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.LongCodec;
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
 * sent, which precedes the server's expiry clock. A holder's lock is then checked every
 * {@code (lease - safetyMargin) / 3}: the check finds that the key still holds the grant's owner, extends it
 * to the lease and reports its {@code PTTL}; one cadence, one round trip, no Redisson watchdog. The checks of all the
 * locks, permits and read-write grants held through this backend go together ({@link RedisRenewals}): at most two
 * rounds a period, each one script per hash slot of at most {@value RedisRenewals#MAX_GRANTS} grants
 * ({@link RedisScripts#CHECK_ALL}), or the grant's own script ({@link RedisScripts#CHECK} for a lock) for a slot with a
 * single grant; so outside a cluster a client holding up to {@value RedisRenewals#MAX_GRANTS} grants sends about as
 * many scripts as one holding one lock. A waiter
 * queues in a sorted set beside the lock and listens on the lock's wake channel; a release wakes only
 * the queued waiter whose entry runs out first, so a hand-over costs the release and the woken waiter's
 * grant however many clients wait, where every waiting client of Redisson's {@code RLock} retries.
 *
 * <p>Semaphores ({@link SemaphoreBackend}) go through the same acquire loop, cluster retries, renewal
 * scheduler and error translation, with scripts of their own ({@link RedisScripts#PERMIT_GRANT},
 * {@link RedisScripts#PERMIT_RELEASE}, {@link RedisScripts#PERMIT_CHECK}) over one expiring key per slot,
 * read by {@link RedisPermitInspection}; see the package documentation.
 */
final class RedisLockBackend implements SemaphoreBackend, ReadWriteBackend {

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

    final RedissonClient redisson; // read by the leases for their scripts
    private final CommandAsyncExecutor commands;
    private final boolean ownsClient;
    private final String prefix;
    private final Duration timeout;
    private final String server;
    final long leaseMillis; // read by the leases for their scripts
    private final long checkPeriodMillis;
    private final ScheduledThreadPoolExecutor checker;
    /** The checks of the held locks, one script per hash slot per round; read by the leases as they start and end. */
    final RedisRenewals renewals;
    private final RedisContender contender;
    private final RedisReadWrite readWrite = new RedisReadWrite(this);
    private final RedisAdmin admin = new RedisAdmin(this);
    /** On a Redis Cluster a lock key with a brace gets a hash tag of its own; see {@link RedisKeys}. */
    private final boolean cluster;
    final HolderStamp stamp; // read by RedisReadWrite for its grants

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
        this.renewals = new RedisRenewals(this, checker, TimeUnit.MILLISECONDS.toNanos(checkPeriodMillis));
        this.contender = new RedisContender(redisson, timeout, checker);
        this.stamp = new HolderStamp(options);
    }

    /** The lease: the time to live this backend gives the lock keys and renews. */
    Duration lease() {
        return Duration.ofMillis(leaseMillis);
    }

    /** The key and the server, for messages of this backend's own: the lock's key, the URI once. */
    String where(String lockName) {
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
    String field(long owner) {
        return redisson.getId() + ":" + owner;
    }

    @Override
    public BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        return retryingInCluster(() -> "lock '" + lockName + "' (" + describe(lockName) + ")", deadline,
                () -> acquireOnce(lockName, deadline, evidence));
    }

    /** One acquire, or on a Redis Cluster as many as {@link RedisErrors#transientInCluster} failures need within the wait. */
    private interface Acquire<T> {
        T run() throws InterruptedException;
    }

    /**
     * An acquire on a Redis Cluster tried again, within the caller's wait, when the cluster answered
     * that it cannot serve the lock's slot for the moment: a primary that restarted refuses commands
     * ({@code CLUSTERDOWN}) for its first two seconds, a slot whose keys are split by a resharding is
     * refused ({@code TRYAGAIN}), and after a failover the client sends to the old primary until its next
     * look at the cluster's layout, and a {@code MOVED} to the promoted replica names a node it does not
     * know yet; and in a rolling restart the node a call went to may restart under it, which closes the
     * connection (the call fails then, see {@link RedisClosedChannels}) or refuses the next one until the
     * node is back. Each is over within about a second; a waiter would otherwise fail at once, where a
     * single server's waiter keeps waiting for its connection. A grant that failed so never holds the
     * lock or permit: the acquire undoes what it may have written before it throws. Outside a cluster,
     * one acquire.
     */
    private <T> T retryingInCluster(java.util.function.Supplier<String> subject, Deadline deadline, Acquire<T> acquire)
            throws InterruptedException {
        while (true) {
            try {
                return acquire.run();
            } catch (LockBackendUnavailableException e) {
                if (!cluster || !transientInCluster(e) || deadline.remainingNanos() <= CLUSTER_PAUSE.toNanos()) {
                    throw e;
                }
                log.debug("{}: the cluster cannot serve its slot for the moment, trying again: {}", subject.get(),
                        e.getMessage());
                Thread.sleep(CLUSTER_PAUSE.toMillis()); // the pace of retries; each attempt has its own bound
            }
        }
    }

    private BackendLease acquireOnce(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        String key = key(lockName);
        long owner = OWNERS.decrementAndGet();
        String holder = stamp.forCurrentThread();
        Contention lock = new Contention("lock '" + lockName + "'", lockName, where(lockName), waitersKey(key),
                wakeChannel(key), true) {
            @Override
            RFuture<List<Long>> send(String field, long queueFor) {
                // With replicas Redisson follows the script with WAIT (checkLockSyncedSlaves), as it did for RFencedLock.
                return commands.syncedEvalNoRetry(key, LongCodec.INSTANCE, RedisCommands.EVAL_LONG_LIST, GRANT,
                        List.of(key, tokenKey(key), waitersKey(key)), leaseMillis, field, queueFor, timeout.toMillis(),
                        holder);
            }

            @Override
            void undo(String field) {
                release(key, field);
            }
        };
        Granted granted = contender.contend(lock, field(owner), deadline);
        if (granted == null) {
            return null;
        }
        long token = granted.reply().get(0);
        long ttl = granted.reply().get(1);
        evidence.confirmed(granted.sentAt(), ttl < 0 ? lease() : Duration.ofMillis(ttl));
        RedisLease lease = new RedisLease(this, lockName, key, owner, token, evidence);
        lease.start();
        log.debug("lock '{}' ({}) acquired with token {}", lockName, describe(lockName), token);
        return lease;
    }

    /** {@link RedisAdmin#inspect}: one read-only script on the lock's key and its waiter queue. */
    @Override
    public Optional<GrantRecord> inspect(String lockName) {
        return admin.inspect(lockName);
    }

    /** {@link RedisAdmin#forceRelease}: one script that reads the grant and deletes the lock key alone. */
    @Override
    public Optional<GrantRecord> forceRelease(String lockName) {
        return admin.forceRelease(lockName);
    }

    /** {@link RedisAdmin#list}: a SCAN of every primary, then one read-only script per name listed. */
    @Override
    public List<String> list(String prefix, String after, int limit) {
        return admin.list(prefix, after, limit);
    }

    CompletableFuture<Long> release(String key, String field) {
        return redisson.getScript(LongCodec.INSTANCE).<Long>evalAsync(key, RScript.Mode.READ_WRITE, RELEASE,
                RScript.ReturnType.LONG, List.of(key, waitersKey(key), wakeChannel(key), redissonChannel(key)), field)
                .toCompletableFuture();
    }

    // ---- read-write locks: RedisReadWrite ----

    @Override
    public String describeReadWrite(String name) {
        return readWrite.describe(name);
    }

    @Override
    public BackendLease acquireRead(String name, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        return retryingInCluster(() -> "read lock '" + name + "' (" + describeReadWrite(name) + ")", deadline,
                () -> readWrite.acquireOnce(name, false, deadline, evidence));
    }

    @Override
    public BackendLease acquireWrite(String name, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        return retryingInCluster(() -> "write lock '" + name + "' (" + describeReadWrite(name) + ")", deadline,
                () -> readWrite.acquireOnce(name, true, deadline, evidence));
    }

    /** {@link RedisReadWriteInspection#read}: one read-only script over the writer key and the readers' entries. */
    @Override
    public ReadWriteRecords inspectReadWrite(String name) throws InterruptedException {
        return new RedisReadWriteInspection(this, name, readWrite.tag(name)).read();
    }

    /** A new owner id of this client, one per grant. */
    long nextOwner() {
        return OWNERS.decrementAndGet();
    }

    String prefix() {
        return prefix;
    }

    String server() {
        return server;
    }

    boolean cluster() {
        return cluster;
    }

    /**
     * The hash slot Redisson routes {@code key} to: on a Redis Cluster the server's own ({@code CLUSTER KEYSLOT},
     * the CRC16 of the key or of its hash tag), elsewhere 0, as one server holds every key.
     */
    int hashSlot(String key) {
        return commands.getConnectionManager().calcSlot(key);
    }

    CommandAsyncExecutor commands() {
        return commands;
    }

    RedisContender contender() {
        return contender;
    }

    Duration timeout() {
        return timeout;
    }

    // ---- semaphores ----

    @Override
    public String describeSemaphore(String name) {
        return "redis key '" + semaphoreKey(semaphoreTag(prefix, name)) + "'";
    }

    String whereSemaphore(String name) {
        return describeSemaphore(name) + " on " + server;
    }

    @Override
    public PermitLease acquirePermit(String name, int permits, Deadline deadline, LeaseEvidence evidence)
            throws InterruptedException {
        return retryingInCluster(() -> "semaphore '" + name + "' (" + describeSemaphore(name) + ")", deadline,
                () -> acquirePermitOnce(name, permits, deadline, evidence));
    }

    private PermitLease acquirePermitOnce(String name, int permits, Deadline deadline, LeaseEvidence evidence)
            throws InterruptedException {
        String tag = semaphoreTag(prefix, name);
        String key = semaphoreKey(tag);
        long owner = OWNERS.decrementAndGet();
        String holder = stamp.forCurrentThread();
        Contention semaphore = new Contention("a permit of semaphore '" + name + "'", name, whereSemaphore(name),
                semaphoreWaitersKey(tag), semaphoreWakeChannel(tag), true) {
            @Override
            RFuture<List<Long>> send(String field, long queueFor) {
                // With replicas Redisson follows the script with WAIT (checkLockSyncedSlaves), as for a lock.
                return commands.syncedEvalNoRetry(key, LongCodec.INSTANCE, RedisCommands.EVAL_LONG_LIST, PERMIT_GRANT,
                        List.of(key, semaphoreTokenKey(tag), semaphoreWaitersKey(tag)), leaseMillis, field, queueFor,
                        timeout.toMillis(), permits, PERMIT_KEY_HEAD, permitKeyTail(tag), holder);
            }

            @Override
            void undo(String field) {
                releasePermit(tag, field, -1, permits);
            }

            @Override
            RuntimeException refusal(List<Long> reply) {
                if (reply.get(0) != MISMATCH) {
                    return null;
                }
                return permitsMismatch(name, reply.get(1), permits);
            }
        };
        Granted granted = contender.contend(semaphore, field(owner), deadline);
        if (granted == null) {
            return null;
        }
        long token = granted.reply().get(0);
        long ttl = granted.reply().get(1);
        int slot = granted.reply().get(2).intValue();
        evidence.confirmed(granted.sentAt(), ttl < 0 ? lease() : Duration.ofMillis(ttl));
        RedisPermit permit = new RedisPermit(this, name, tag, permits, slot, owner, token, evidence);
        permit.start();
        log.debug("semaphore '{}' ({}) permit {} acquired with token {}", name, describeSemaphore(name), slot, token);
        return permit;
    }

    /**
     * {@link RedisPermitInspection#read}: one read-only script over the semaphore's hash and its slot keys,
     * the holder, token and grant time each held slot's grant wrote, and the slot key's PTTL.
     */
    @Override
    public Map<Integer, GrantRecord> inspectPermits(String name, int permits) throws InterruptedException {
        return new RedisPermitInspection(this, name, semaphoreTag(prefix, name)).read(permits);
    }

    /** The refusal when the server knows semaphore {@code name} with {@code known} permits, not {@code permits}. */
    IllegalArgumentException permitsMismatch(String name, long known, int permits) {
        return new IllegalArgumentException("semaphore '" + name + "' (" + describeSemaphore(name) + ") has " + known
                + " permits on the server, and this call asked for " + permits
                + ": every holder of a semaphore must use the same number of permits");
    }

    /** The answer of {@link RedisScripts#PERMIT_GRANT} when the semaphore is in use with another number of permits. */
    private static final long MISMATCH = -2;

    /** {@link RedisScripts#PERMIT_RELEASE} of {@code slot} ({@code -1}: whichever slot holds {@code field}). */
    CompletableFuture<Long> releasePermit(String tag, String field, int slot, int permits) {
        String key = semaphoreKey(tag);
        return redisson.getScript(LongCodec.INSTANCE).<Long>evalAsync(key, RScript.Mode.READ_WRITE, PERMIT_RELEASE,
                RScript.ReturnType.LONG, List.of(key, semaphoreWaitersKey(tag), semaphoreWakeChannel(tag)), field, slot,
                PERMIT_KEY_HEAD, permitKeyTail(tag), permits).toCompletableFuture();
    }

    /**
     * Not a fair lock (see the package javadoc): a release lets any client's new request take the key
     * before the woken waiter. So a client's own threads are not queued in arrival order either: the
     * thread that released and asks again goes on to the server at once, as a thread of Redisson's
     * {@code RLock} does, instead of waking a parked thread of its client first (lock-bench: contended
     * acquisitions 0.94x RLock with this, 0.69x with arrival order, on the same machine).
     */
    @Override
    public boolean fairOrder() {
        return false;
    }

    @Override
    public void close() {
        checker.shutdownNow();
        contender.close();
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

    /** {@code f}'s answer within the timeout, or the error of this backend for {@code name} at {@code where}. */
    <T> T await(CompletableFuture<T> f, String name, String subject, String where, String what) {
        try {
            return awaitInterruptibly(f, name, subject, where, what);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException(name, "interrupted " + what + " (" + where + ")", e);
        }
    }

    /** As {@link #await}, for a caller that may throw {@link InterruptedException} itself. */
    <T> T awaitInterruptibly(CompletableFuture<T> f, String name, String subject, String where, String what)
            throws InterruptedException {
        long start = System.nanoTime();
        try {
            return f.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw orPaused(translate(name, where, what, timeout, e), name, subject, where, what, start,
                    timeout.toNanos());
        } catch (TimeoutException e) {
            throw orPaused(didNotAnswer(name, where, what, timeout, e), name, subject, where, what, start,
                    timeout.toNanos());
        }
    }
}
