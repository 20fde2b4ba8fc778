package io.latchkey.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.GrantRecord;
import io.latchkey.spi.HolderStamp;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.LockUri;
import io.latchkey.spi.Pauses;
import io.latchkey.spi.PermitLease;
import io.latchkey.spi.ReadWriteBackend;
import io.latchkey.spi.ReadWriteRecords;
import io.latchkey.spi.SemaphoreBackend;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
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
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock per name as a queue of keys ordered by create revision, the design of Go's
 * {@code concurrency.Mutex}: every contender puts {@code <namespace><name>/<lease id>-<sequence>} bound
 * to the client's one etcd lease ({@link EtcdSession}), and holds the lock once no key of that name with
 * a lower create revision is left. A waiter watches only the key just before its own (no herd) and
 * re-reads after every event, so the order is first come, first served.
 *
 * <p>What a lock costs, in etcd requests:
 * <ul>
 *   <li>Acquire: one transaction that puts the key if it is absent and, in the same transaction, reads
 *       the newest two keys of the queue: this one and the key before it, if any. One RPC and one Raft
 *       commit; a free lock needs nothing else, a held one tells its predecessor without another round
 *       trip. A waiter then watches the predecessor from the revision just after that read (a watch
 *       of the future, which etcd serves at once, not a catching-up one served every 100 ms, see
 *       {@link EtcdQueue#awaitTurn}) and, after each event, re-reads in one read-only transaction (no
 *       Raft commit) that requires its own key to still have its create revision.</li>
 *   <li>Release: one transaction that deletes the key if it still has the grant's create revision.
 *       One RPC, one Raft commit; the lease stays for the client's other keys.</li>
 *   <li>So an uncontended lock+unlock is two RPCs and two Raft commits, plus the client's keepalive
 *       every third of the TTL, whatever the number of locks (a keepalive is no Raft proposal in
 *       etcd 3.4). Connect grants the client's lease (kept for its first lock), close revokes it.</li>
 * </ul>
 *
 * <p>Guarantees: the fencing token is the create revision of the holder's key, which etcd never
 * reuses, not across restarts nor after keys expire (contract rule 8, docs/contract.md). Rule 7: every
 * grant's validity deadline runs from the send time of the session's last confirmed keepalive (or of
 * its grant) plus the TTL etcd reported then, minus {@code safetyMargin}; every later keepalive of the
 * session confirms every lock of the client, and a keepalive that fails ends them all. That bound is
 * sound for a key put at any time while the lease exists, because the key lives as long as the lease
 * and the lease at least that TTL after the keepalive was sent.
 *
 * <p>etcd issue 11456 (a lock granted on a lease that had expired while its owner waited) is covered
 * without a {@code LeaseTimeToLive} per grant: etcd refuses a put bound to a lease it no longer knows
 * ("requested lease not found"), after which the session ends and the acquire retries on a new lease;
 * a waiter is granted only by a read that, in the same transaction, finds its own key with its create
 * revision, so its lease still existed then; and a lease that etcd considers expired but has not yet
 * revoked cannot be valid here, since its deadline from the last keepalive passed first. A session
 * whose keepalive is overdue past that deadline is ended rather than used for a grant.
 *
 * <p>The {@code lease} option is the client's, so one TTL serves every lock of a client and one lease
 * is enough; a client that needs other leases for some locks connects a second {@code LockClient}.
 * Only {@code atLeast} binds a key to a lease of its own, see {@link EtcdLease#releaseAfter}.
 *
 * <p>A waiter that gives up deletes its key at once, so it can never become the holder later. Every
 * call to etcd is bounded by the {@code timeout} option.
 *
 * <p>Semaphores ({@link SemaphoreBackend}) are slot keys on the same sessions, calls and retries, see
 * {@link EtcdSemaphores}: a permit is renewed, lost and released exactly as a lock's key. Read-write
 * locks ({@link ReadWriteBackend}) are reader and writer keys on the lock's own queue, sessions, calls
 * and retries, under a prefix of their own, see {@link EtcdReadWrite}: a read or write grant costs,
 * renews, is lost and is released exactly as a lock's key.
 *
 * <p>Thread-safe. The shared layer never sends two concurrent acquires of one lock name from one client;
 * it may send several of one semaphore name, which {@link EtcdSemaphores} expects, and several reads
 * of one read-write lock name, each a key of its own.
 */
final class EtcdLockBackend implements SemaphoreBackend, ReadWriteBackend {

    private static final Logger log = LoggerFactory.getLogger(EtcdLockBackend.class);
    private static final AtomicInteger BACKENDS = new AtomicInteger();
    /** Makes every key name of this process unique, see {@link EtcdLease}. */
    static final AtomicLong KEYS = new AtomicLong();

    private final Client client;
    private final Vertx vertx;
    private final boolean ownsClient;
    private final String namespace;
    private final long ttlSeconds;
    private final Duration lease;
    private final Duration timeout;
    private final String where;
    private final String user;
    private final Duration safetyMargin;
    private final HolderStamp stamp;
    private final ScheduledThreadPoolExecutor keepalives;
    private final EtcdQueue queue = new EtcdQueue(this);
    private final EtcdSemaphores semaphores = new EtcdSemaphores(this);
    private final EtcdReadWrite readWrite;
    private final ReentrantLock sessionLock = new ReentrantLock();
    private EtcdSession session; // guarded by sessionLock
    private boolean closed; // guarded by sessionLock

    EtcdLockBackend(Client client, Vertx vertx, boolean ownsClient, String namespace, long ttlSeconds,
            LockOptions options, String where) {
        this.client = client;
        this.vertx = vertx;
        this.ownsClient = ownsClient;
        this.namespace = namespace;
        this.ttlSeconds = ttlSeconds;
        this.lease = options.lease();
        this.timeout = options.timeout();
        this.safetyMargin = options.safetyMargin();
        this.where = where;
        this.user = options.username();
        this.stamp = new HolderStamp(options);
        this.readWrite = new EtcdReadWrite(this, queue, namespace);
        this.keepalives = new ScheduledThreadPoolExecutor(1,
                DaemonThreads.factory("latchkey-etcd-" + BACKENDS.incrementAndGet() + "-keepalive"));
        this.keepalives.setRemoveOnCancelPolicy(true);
    }

    @Override
    public String describe(String lockName) {
        return "etcd key prefix '" + prefix(lockName) + "'";
    }

    /**
     * Checks at connect time that etcd answers and grants the TTL asked for ({@link EtcdProbe#check}); the
     * lease granted for the check becomes the client's session, so the first lock costs no grant of its own.
     */
    void probe(List<LockUri.HostAndPort> hosts) {
        EtcdProbe.Granted test = new EtcdProbe(this, namespace, ttlSeconds, lease, where).check(hosts);
        sessionLock.lock();
        try {
            session = new EtcdSession(this, test.lease().getID(), Duration.ofSeconds(test.lease().getTTL()),
                    test.sentAt(), safetyMargin, keepalives);
        } finally {
            sessionLock.unlock();
        }
        EtcdProbe.connected();
    }

    @Override
    public BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        return retrying(lockName, deadline, () -> attempt(lockName, deadline, evidence));
    }

    /** Reads the oldest key of the lock's queue and its lease, see {@link EtcdInspection}. */
    @Override
    public Optional<GrantRecord> inspect(String lockName) throws InterruptedException {
        return EtcdInspection.read(this, lockName);
    }

    /** Deletes the holder's key, guarded by its create revision, see {@link EtcdAdmin} and {@link EtcdGrantCheck}. */
    @Override
    public Optional<GrantRecord> forceRelease(String lockName) throws InterruptedException {
        return EtcdAdmin.forceRelease(this, lockName);
    }

    /** The names of the lock keys of one range read under the prefix, see {@link EtcdAdmin}. */
    @Override
    public List<String> list(String prefix, String after, int limit) throws InterruptedException {
        return EtcdAdmin.list(this, namespace, prefix, after, limit);
    }

    @Override
    public String describeSemaphore(String name) {
        return "etcd key prefix '" + semaphorePrefix(namespace, name) + "'";
    }

    /** A permit as {@link EtcdSemaphores} takes it, on the same sessions, retries and bounds as a lock. */
    @Override
    public PermitLease acquirePermit(String name, int permits, Deadline deadline, LeaseEvidence evidence)
            throws InterruptedException {
        return retrying(name, deadline, () -> semaphores.attempt(name, permits, deadline, evidence));
    }

    /** Reads the slot keys of the semaphore and their leases, see {@link EtcdPermitInspection}. */
    @Override
    public Map<Integer, GrantRecord> inspectPermits(String name, int permits) throws InterruptedException {
        return EtcdPermitInspection.read(this, name, permits);
    }

    @Override
    public String describeReadWrite(String name) {
        return readWrite.describe(name);
    }

    /** Reads the reader and writer keys of the name and their leases, see {@link EtcdReadWriteInspection}. */
    @Override
    public ReadWriteRecords inspectReadWrite(String name) throws InterruptedException {
        return readWrite.inspect(name);
    }

    /** A read grant as {@link EtcdReadWrite} takes it, on the same sessions, retries and bounds as a lock. */
    @Override
    public BackendLease acquireRead(String name, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        return retrying(name, deadline, () -> readWrite.attempt(name, false, deadline, evidence));
    }

    /** The write grant as {@link EtcdReadWrite} takes it, on the same sessions, retries and bounds as a lock. */
    @Override
    public BackendLease acquireWrite(String name, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        return retrying(name, deadline, () -> readWrite.attempt(name, true, deadline, evidence));
    }

    /** One attempt on the client's current session; null if the deadline passed while waiting. */
    interface Attempt<T> {
        T run() throws InterruptedException;
    }

    /**
     * Runs {@code attempt} until it returns, trying again while the caller waits if etcd could not be
     * reached, and at once (at most twice) if etcd no longer knew the client's lease.
     */
    private <T> T retrying(String name, Deadline deadline, Attempt<T> attempt) throws InterruptedException {
        int leasesGone = 0;
        while (true) {
            try {
                return attempt.run();
            } catch (LockBackendUnavailableException e) {
                if (e instanceof EtcdQueue.LeaseGone && ++leasesGone <= 2) {
                    // a definite answer, not an outage: the next attempt grants a new lease at once, even
                    // past the deadline (an attempt on the client's old lease was no real try)
                    log.debug("'{}': {}", name, e.getMessage());
                    continue;
                }
                // gRPC reconnects with a growing backoff after a restart, and an election briefly fails
                // requests or ends the session: try again (on a new session if need be) while the caller waits
                if (deadline.hasPassed()) {
                    throw e;
                }
                log.debug("'{}': trying again until the wait ends: {}", name, e.getMessage());
                TimeUnit.NANOSECONDS.sleep(Math.min(deadline.remainingNanos(), TimeUnit.MILLISECONDS.toNanos(200)));
            }
        }
    }

    /** {@link #session(String, String)} for lock {@code lockName}. */
    EtcdSession session(String lockName) throws InterruptedException {
        return session(lockName, subject(lockName));
    }

    /**
     * The client's session, granting a new lease if there is none or the last one ended; one grant at a
     * time, whatever the number of threads that need it.
     *
     * @param subject what the session is wanted for, first in messages, as {@link #subject} says it
     */
    EtcdSession session(String name, String subject) throws InterruptedException {
        sessionLock.lockInterruptibly();
        try {
            if (closed) {
                throw new IllegalStateException(subject + "the etcd lock client for " + where + " is closed");
            }
            EtcdSession current = session;
            if (current != null && current.usable()) {
                return current;
            }
            long sentAt = System.nanoTime();
            LeaseGrantResponse granted = call(name, subject, "granting a lease", client.getLeaseClient()
                    .grant(ttlSeconds, timeout.toMillis(), TimeUnit.MILLISECONDS));
            if (granted.getTTL() != ttlSeconds) {
                // connect checked the minimum; a member with other settings may still raise it
                log.warn("{}etcd granted a lease of {}s instead of the {}s asked for, so a crash of this client frees"
                        + " its locks later than lease={}", subject, granted.getTTL(), ttlSeconds, Durations.format(lease));
            }
            session = new EtcdSession(this, granted.getID(), Duration.ofSeconds(granted.getTTL()), sentAt, safetyMargin,
                    keepalives);
            return session;
        } finally {
            sessionLock.unlock();
        }
    }

    /** One attempt on the current session: the handle, or null if the deadline passed while waiting. */
    private BackendLease attempt(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        EtcdSession session = session(lockName);
        ByteSequence key = session.newKey(prefix(lockName));
        return queue.take(new EtcdLease(this, lockName, key, session, holderText()), deadline, evidence);
    }

    /** The holder text of a grant the current thread asks for now: the value its key is put with. */
    String holderText() {
        return stamp.forCurrentThread();
    }

    /**
     * Waits for {@code future} at most {@code timeout}, turning failures into the exceptions of the API.
     *
     * @param lockName the lock concerned, or null while connecting
     */
    <T> T call(String lockName, String what, CompletableFuture<T> future) throws InterruptedException {
        return call(lockName, subject(lockName), what, future);
    }

    /** {@link #call(String, String, CompletableFuture)} with messages that begin with {@code subject}. */
    <T> T call(String name, String subject, String what, CompletableFuture<T> future) throws InterruptedException {
        return call(name, subject, what, future, timeout);
    }

    /** {@link #call(String, String, String, CompletableFuture)} waiting at most {@code bound}: the rest of a timeout. */
    <T> T call(String name, String subject, String what, CompletableFuture<T> future, Duration bound)
            throws InterruptedException {
        return call(name, () -> subject, () -> what, future, bound);
    }

    /**
     * {@link #call(String, String, String, CompletableFuture, Duration)} with the messages' parts built only
     * if the call fails: the calls of every grant and release, whose answer is all that is needed.
     */
    <T> T call(String name, Supplier<String> subject, Supplier<String> what, CompletableFuture<T> future,
            Duration bound) throws InterruptedException {
        long start = System.nanoTime();
        try {
            return future.get(bound.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            future.cancel(true);
            throw e;
        } catch (TimeoutException e) {
            future.cancel(true);
            throw silent(name, subject.get(), what.get(), start, bound, e);
        } catch (ExecutionException e) {
            throw failed(name, subject.get(), what.get(), start, bound, e.getCause());
        }
    }

    /** {@code "lock 'name' (etcd key prefix '...'): "}, or empty while connecting: messages name the lock first. */
    String subject(String lockName) {
        return lockName == null ? "" : "lock '" + lockName + "' (" + describe(lockName) + "): ";
    }

    /** {@code "semaphore 'name' (etcd key prefix '...'): "}: messages about a semaphore name it first. */
    String semaphoreSubject(String name) {
        return "semaphore '" + name + "' (" + describeSemaphore(name) + "): ";
    }

    /** No answer within {@code bound}: etcd's silence, unless this process itself was paused far past it. */
    LockBackendUnavailableException silent(String lockName, String what, long startNanos, Duration bound, Throwable cause) {
        return silent(lockName, subject(lockName), what, startNanos, bound, cause);
    }

    private LockBackendUnavailableException silent(String name, String subject, String what, long startNanos,
            Duration bound, Throwable cause) {
        String paused = paused(startNanos, bound, what);
        return new LockBackendUnavailableException(name, subject + (paused != null ? paused
                : "etcd at " + where + " did not answer within " + Durations.format(bound) + " while " + what
                        + "; check that it runs and is reachable"), cause);
    }

    /** A failed call, translated; an unavailability after a pause of this process far past the bound says so. */
    LockException failed(String lockName, String what, long startNanos, Duration bound, Throwable cause) {
        return failed(lockName, subject(lockName), what, startNanos, bound, cause);
    }

    private LockException failed(String name, String subject, String what, long startNanos, Duration bound,
            Throwable cause) {
        LockException e = EtcdErrors.translate(name, subject, what, cause, where, user, namespace);
        String paused = e instanceof LockBackendUnavailableException ? paused(startNanos, bound, what) : null;
        return paused == null ? e : new LockBackendUnavailableException(name, subject + paused, cause);
    }

    /**
     * The message for a call that ended far past its bound: the waiting thread itself did not run (SIGSTOP,
     * a long GC, a suspended VM), so the silence is this process's, not etcd's; null if it was not paused.
     */
    private String paused(long startNanos, Duration bound, String what) {
        return Pauses.since(startNanos, bound).pause().map(p -> Pauses.sentence(p, bound, what, "etcd at " + where))
                .orElse(null);
    }

    /**
     * {@link #call(String, String, String, CompletableFuture)} for a request that puts a key which the caller
     * deletes if it gives up: an interrupt while the request is in flight is thrown only once etcd answered it
     * (or the timeout passed), waiting without being interrupted again, so that the delete sent next cannot
     * reach etcd before the put and leave the key behind it, bound to the client's lease and queued ahead of
     * every later request of the name for as long as the client lives.
     */
    <T> T callSettled(String name, Supplier<String> subject, Supplier<String> what, CompletableFuture<T> future)
            throws InterruptedException {
        try {
            return call(name, subject, what, future.thenApply(answer -> answer), timeout); // an interrupt cancels this copy
        } catch (InterruptedException e) {
            long until = System.nanoTime() + timeout.toNanos();
            while (!future.isDone() && until - System.nanoTime() > 0) {
                try {
                    future.get(until - System.nanoTime(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException again) {
                    // still waiting for the put's answer: the delete must come after it
                } catch (ExecutionException | TimeoutException done) {
                    break; // refused: nothing was put; or no answer: the delete goes by name, and at the keepalives
                }
            }
            throw e;
        }
    }

    /** {@link #call} for callers that cannot throw {@link InterruptedException}: it keeps the interrupt status. */
    <T> T callUninterruptibly(String lockName, String what, CompletableFuture<T> future) {
        return callUninterruptibly(lockName, subject(lockName), what, future);
    }

    <T> T callUninterruptibly(String name, String subject, String what, CompletableFuture<T> future) {
        return callUninterruptibly(name, () -> subject, () -> what, future);
    }

    /** {@link #callUninterruptibly(String, String, String, CompletableFuture)} with the messages built only if it fails. */
    <T> T callUninterruptibly(String name, Supplier<String> subject, Supplier<String> what, CompletableFuture<T> future) {
        try {
            return call(name, subject, what, future, timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException(name, subject.get() + "interrupted while " + what.get() + " at etcd " + where, e);
        }
    }

    Client client() {
        return client;
    }

    Duration timeout() {
        return timeout;
    }

    String prefix(String lockName) {
        return prefix(namespace, lockName);
    }

    /** The key prefix of a lock's queue: {@code namespace}, the escaped name, and '/'. */
    static String prefix(String namespace, String lockName) {
        if (lockName.indexOf('%') < 0 && lockName.indexOf('/') < 0) {
            return namespace + lockName + '/'; // nothing to escape, as in most names
        }
        StringBuilder b = new StringBuilder(namespace.length() + lockName.length() + 1).append(namespace);
        // '/' ends the name in the key, so it and the escape character are escaped: 'a' and 'a/b' never share a prefix
        for (int i = 0; i < lockName.length(); i++) {
            char c = lockName.charAt(i);
            if (c == '%') {
                b.append("%25");
            } else if (c == '/') {
                b.append("%2F");
            } else {
                b.append(c);
            }
        }
        return b.append('/').toString();
    }

    /**
     * The key of a lock's last completed schedule slot: the queue's prefix without its final '/' plus
     * {@code .slot}, beside the queue and never inside any lock's queue (escaped names hold no '/'). Its
     * value is the slot as an ISO-8601 instant; its mod revision tells which grant wrote it. It outlives
     * the lock on purpose: it is the record of what ran.
     */
    ByteSequence slotKey(String lockName) {
        String prefix = prefix(lockName);
        return bytes(prefix.substring(0, prefix.length() - 1) + ".slot");
    }

    String semaphorePrefix(String name) {
        return semaphorePrefix(namespace, name);
    }

    /**
     * The key prefix of a semaphore's slots: {@code namespace}, {@value #SEMAPHORES}, the escaped name
     * and '/'. No lock's keys ever begin with it: an escaped lock name holds '%' only as {@code %25}
     * or {@code %2F}, never {@code %s}, so no lock queue {@code <namespace><escaped name>/} and no
     * schedule slot key (which holds no '/' after the namespace) starts with {@code <namespace>%semaphores/}.
     */
    static String semaphorePrefix(String namespace, String name) {
        return prefix(namespace + SEMAPHORES, name);
    }

    /** The segment after the namespace under which every semaphore lives, apart from every lock. */
    static final String SEMAPHORES = "%semaphores/";

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        EtcdSession last;
        sessionLock.lock();
        try {
            closed = true;
            last = session;
            session = null;
        } finally {
            sessionLock.unlock();
        }
        if (last != null) {
            last.close(); // revoking the lease removes every key still bound to it (rule 10)
        }
        keepalives.shutdownNow();
        try {
            keepalives.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!ownsClient) {
            return;
        }
        client.close();
        if (vertx != null) {
            try {
                // jetcd's close starts the Vert.x shutdown without waiting; wait so its threads are gone on return
                vertx.close().toCompletionStage().toCompletableFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                log.warn("closing the etcd client at {}: Vert.x did not stop within {}", where, Durations.format(timeout), e);
            }
        }
    }

    @Override
    public String toString() {
        return "EtcdLockBackend{" + where + ", namespace=" + namespace + ", lease=" + ttlSeconds + "s}";
    }
}
