package io.latchkey.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.grpc.Status;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.LockBackend;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock per name as a queue of keys ordered by create revision, the design of Go's
 * {@code concurrency.Mutex}: every contender puts {@code <namespace><name>/<lease id>} bound to its own
 * etcd lease, and holds the lock once no key of that name with a lower create revision is left. A
 * waiter watches only the key just before its own (no herd) and re-reads after every event, so the
 * order is first come, first served.
 *
 * <p>Guarantees: the fencing token is the create revision of the holder's key, which etcd never
 * reuses, not across restarts nor after keys expire (contract rule 8, docs/contract.md). A grant is reported only after
 * {@code LeaseTimeToLive} shows the lease still alive, and the validity deadline runs from the TTL the
 * server reports then, not from the requested TTL: etcd issue 11456 showed a lock granted on a lease
 * that had already expired. A waiter that gives up revokes its lease at once, so its key can never make
 * it the holder later. Every call to etcd is bounded by the {@code timeout} option.
 *
 * <p>Thread-safe. The shared layer never sends two concurrent acquires of one name from one client.
 */
final class EtcdLockBackend implements LockBackend {

    private static final Logger log = LoggerFactory.getLogger(EtcdLockBackend.class);
    private static final AtomicInteger BACKENDS = new AtomicInteger();

    private final Client client;
    private final Vertx vertx;
    private final boolean ownsClient;
    private final String namespace;
    private final long ttlSeconds;
    private final Duration lease;
    private final Duration timeout;
    private final String where;
    private final String user;
    private final ScheduledThreadPoolExecutor keepalives;

    EtcdLockBackend(Client client, Vertx vertx, boolean ownsClient, String namespace, long ttlSeconds,
            LockOptions options, String where) {
        this.client = client;
        this.vertx = vertx;
        this.ownsClient = ownsClient;
        this.namespace = namespace;
        this.ttlSeconds = ttlSeconds;
        this.lease = options.lease();
        this.timeout = options.timeout();
        this.where = where;
        this.user = options.username();
        this.keepalives = new ScheduledThreadPoolExecutor(1,
                DaemonThreads.factory("latchkey-etcd-" + BACKENDS.incrementAndGet() + "-keepalive"));
        this.keepalives.setRemoveOnCancelPolicy(true);
    }

    @Override
    public String describe(String lockName) {
        return "etcd key prefix '" + prefix(lockName) + "'";
    }

    /**
     * Checks at connect time that etcd answers, that the credentials may read the namespace, and that
     * etcd grants the TTL the lease asks for, all within {@code timeout}; the client's own start-up is
     * not charged to etcd (see {@link Startup}).
     *
     * @throws IllegalArgumentException if etcd raises the TTL to its minimum: the lease would then not
     *     be the failover bound
     */
    void probe() {
        // jetcd builds its channel and stubs on first use: do that before the clock starts
        client.getKVClient();
        client.getLeaseClient();
        client.getWatchClient();
        Startup startup = new Startup(timeout);
        startup.await(this, "reading namespace '" + namespace + "'", client.getKVClient().get(bytes(namespace),
                GetOption.builder().isPrefix(true).withCountOnly(true).build()));
        LeaseGrantResponse test = startup.await(this, "granting a test lease of " + ttlSeconds + "s",
                client.getLeaseClient().grant(ttlSeconds, timeout.toMillis(), TimeUnit.MILLISECONDS));
        try {
            startup.await(this, "revoking the test lease", client.getLeaseClient().revoke(test.getID()));
        } catch (LockException e) {
            if (EtcdErrors.code(e.getCause()) != Status.Code.NOT_FOUND) {
                throw e;
            }
        }
        if (test.getTTL() > ttlSeconds) {
            throw new IllegalArgumentException("lease=" + Durations.format(lease) + " is below what etcd at " + where
                    + " grants: the lease asks for a TTL of " + ttlSeconds + "s (its whole seconds less the "
                    + EtcdLockProvider.EXPIRY_CHECK_MILLIS + "ms etcd may take to expire it), and this etcd's minimum"
                    + " TTL is " + test.getTTL() + "s (1.5 x its --election-timeout, rounded up); use lease="
                    + Durations.format(Duration.ofSeconds(test.getTTL()).plusMillis(EtcdLockProvider.EXPIRY_CHECK_MILLIS))
                    + " or more");
        }
    }

    @Override
    public BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        while (true) {
            try {
                return attempt(lockName, deadline, evidence);
            } catch (LockBackendUnavailableException e) {
                // gRPC reconnects with a growing backoff after a restart, and an election briefly fails
                // requests or ends a waiter's lease: try again with a fresh lease while the caller still waits
                if (deadline.hasPassed()) {
                    throw e;
                }
                log.debug("lock '{}': trying again until the wait ends: {}", lockName, e.getMessage());
                TimeUnit.NANOSECONDS.sleep(Math.min(deadline.remainingNanos(), TimeUnit.MILLISECONDS.toNanos(200)));
            }
        }
    }

    /** One attempt with a lease of its own: the handle, or null if the deadline passed while waiting. */
    private BackendLease attempt(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        String prefix = prefix(lockName);
        LeaseGrantResponse granted = call(lockName, "granting a lease", client.getLeaseClient()
                .grant(ttlSeconds, timeout.toMillis(), TimeUnit.MILLISECONDS));
        if (granted.getTTL() != ttlSeconds) {
            // connect checked the minimum; a member with other settings may still raise it
            log.warn("lock '{}' ({}): etcd granted a lease of {}s instead of the {}s asked for, so a crash of this holder"
                    + " frees the lock later than lease={}", lockName, describe(lockName), granted.getTTL(), ttlSeconds,
                    Durations.format(lease));
        }
        ByteSequence key = bytes(prefix + Long.toHexString(granted.getID()));
        EtcdLease lease = new EtcdLease(this, lockName, key, granted.getID(), Duration.ofSeconds(granted.getTTL()));
        boolean handedOut = false;
        boolean unreachable = false;
        try {
            lease.startKeepalive(keepalives);
            long revision = enqueue(lockName, lease);
            if (!awaitTurn(lockName, prefix, lease, revision, deadline)) {
                return null;
            }
            confirm(lockName, lease, revision, evidence);
            handedOut = true;
            log.debug("lock '{}' acquired: key '{}', token {}", lockName, lease.keyString(), revision);
            return lease;
        } catch (LockBackendUnavailableException e) {
            unreachable = true;
            throw e;
        } finally {
            if (!handedOut) {
                // an abandoned waiter must never become the holder later: its key goes now, not at expiry;
                // towards an unreachable etcd the revoke is only sent, the key then expires with its lease
                lease.revoke(!unreachable);
            }
        }
    }

    /** Puts this contender's key, bound to its lease; returns the key's create revision. */
    private long enqueue(String lockName, EtcdLease lease) throws InterruptedException {
        ByteSequence key = lease.key();
        TxnResponse r = call(lockName, "queueing key '" + lease.keyString() + "'", client.getKVClient().txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                .Then(Op.put(key, bytes(lockName), PutOption.builder().withLeaseId(lease.id()).build()))
                .Else(Op.get(key, GetOption.DEFAULT))
                .commit());
        long revision = r.isSucceeded() ? r.getHeader().getRevision()
                : r.getGetResponses().get(0).getKvs().get(0).getCreateRevision();
        lease.revision(revision);
        return revision;
    }

    /**
     * Waits until no key of the lock has a lower create revision than {@code revision}.
     *
     * @return false if the deadline passed first
     */
    private boolean awaitTurn(String lockName, String prefix, EtcdLease lease, long revision, Deadline deadline)
            throws InterruptedException {
        Watch watch = client.getWatchClient();
        GetOption predecessor = GetOption.builder().isPrefix(true).withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.DESCEND).withMaxCreateRevision(revision - 1).withLimit(1)
                .withKeysOnly(true).build();
        while (true) {
            lease.ensureAlive();
            GetResponse r = call(lockName, "reading the queue", client.getKVClient().get(bytes(prefix), predecessor));
            if (r.getKvs().isEmpty()) {
                return true;
            }
            if (deadline.hasPassed()) {
                return false;
            }
            KeyValue before = r.getKvs().get(0);
            CountDownLatch changed = new CountDownLatch(1);
            lease.wakeOnLoss(changed);
            WatchOption deletes = WatchOption.builder().withRevision(r.getHeader().getRevision() + 1)
                    .withNoPut(true).build();
            try (Watch.Watcher ignored = watch.watch(before.getKey(), deletes, Watch.listener(
                    response -> {
                        if (response.getEvents().stream().anyMatch(e -> e.getEventType() == WatchEvent.EventType.DELETE)) {
                            changed.countDown();
                        }
                    },
                    error -> changed.countDown(), // re-read instead of trusting a broken watch
                    changed::countDown))) {
                // the watch is a shortcut: re-reading every timeout also covers a watch that went quiet
                changed.await(Math.min(deadline.remainingNanos(), timeout.toNanos()), TimeUnit.NANOSECONDS);
            } finally {
                lease.wakeOnLoss(null);
            }
        }
    }

    /** Confirms the lease is alive now that the key is first in line (etcd issue 11456), then reports the grant. */
    private void confirm(String lockName, EtcdLease lease, long revision, LeaseEvidence evidence)
            throws InterruptedException {
        GetResponse own = call(lockName, "reading key '" + lease.keyString() + "'", client.getKVClient().get(lease.key()));
        if (own.getKvs().isEmpty() || own.getKvs().get(0).getCreateRevision() != revision) {
            // unavailable, so that acquire tries again with a fresh lease while the caller still waits
            throw new LockBackendUnavailableException(lockName, "lock '" + lockName + "' (" + describe(lockName)
                    + "): the key '" + lease.keyString() + "' vanished while waiting, so its lease expired or it was"
                    + " deleted by hand; the lock was not granted, try again", null);
        }
        long sentAt = System.nanoTime();
        LeaseTimeToLiveResponse ttl;
        try {
            ttl = call(lockName, "checking the lease", client.getLeaseClient().timeToLive(lease.id(), LeaseOption.DEFAULT));
        } catch (LockException e) {
            if (EtcdErrors.code(e.getCause()) != Status.Code.NOT_FOUND) {
                throw e;
            }
            ttl = null;
        }
        if (ttl == null || ttl.getTTL() <= 0) {
            throw new LockBackendUnavailableException(lockName, "lock '" + lockName + "' (" + describe(lockName)
                    + "): the lease of key '" + lease.keyString() + "' had expired when its turn came, so the lock was"
                    + " not granted (keepalives did not get through); check the connection to etcd and try again", null);
        }
        lease.granted(evidence, sentAt, Duration.ofSeconds(ttl.getTTL()));
    }

    /**
     * Waits for {@code future} at most {@code timeout}, turning failures into the exceptions of the API.
     *
     * @param lockName the lock concerned, or null while connecting
     */
    <T> T call(String lockName, String what, CompletableFuture<T> future) throws InterruptedException {
        long start = System.nanoTime();
        try {
            return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            future.cancel(true);
            throw e;
        } catch (TimeoutException e) {
            future.cancel(true);
            throw silent(lockName, what, start, timeout, e);
        } catch (ExecutionException e) {
            throw failed(lockName, what, start, timeout, e.getCause());
        }
    }

    /** {@code "lock 'name' (etcd key prefix '...'): "}, or empty while connecting: messages name the lock first. */
    String subject(String lockName) {
        return lockName == null ? "" : "lock '" + lockName + "' (" + describe(lockName) + "): ";
    }

    /** No answer within {@code bound}: etcd's silence, unless this process itself was paused far past it. */
    LockBackendUnavailableException silent(String lockName, String what, long startNanos, Duration bound, Throwable cause) {
        String paused = paused(startNanos, bound, what);
        return new LockBackendUnavailableException(lockName, subject(lockName) + (paused != null ? paused
                : "etcd at " + where + " did not answer within " + Durations.format(bound) + " while " + what
                        + "; check that it runs and is reachable"), cause);
    }

    /** A failed call, translated; an unavailability after a pause of this process far past the bound says so. */
    LockException failed(String lockName, String what, long startNanos, Duration bound, Throwable cause) {
        LockException e = EtcdErrors.translate(lockName, subject(lockName), what, cause, where, user, namespace);
        String paused = e instanceof LockBackendUnavailableException ? paused(startNanos, bound, what) : null;
        return paused == null ? e : new LockBackendUnavailableException(lockName, subject(lockName) + paused, cause);
    }

    /**
     * The message for a call that ended far past its bound: the waiting thread itself did not run (SIGSTOP,
     * a long GC, a suspended VM), so the silence is this process's, not etcd's; null if it was not paused.
     */
    private String paused(long startNanos, Duration bound, String what) {
        long over = System.nanoTime() - startNanos - bound.toNanos();
        if (over <= Math.max(bound.toNanos(), TimeUnit.SECONDS.toNanos(1))) {
            return null;
        }
        return "this process was paused for " + TimeUnit.NANOSECONDS.toMillis(over) + " ms while " + what
                + " (bound " + Durations.format(bound) + "), so the answer of etcd at " + where + " was not awaited;"
                + " look for long GC pauses or a stopped process, then try again";
    }

    /** {@link #call} for callers that cannot throw {@link InterruptedException}: it keeps the interrupt status. */
    <T> T callUninterruptibly(String lockName, String what, CompletableFuture<T> future) {
        try {
            return call(lockName, what, future);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException(lockName, subject(lockName) + "interrupted while " + what + " at etcd " + where, e);
        }
    }

    /**
     * The bound of {@code connect}: {@code timeout} of etcd's time, from just before the first request.
     *
     * <p>The first request of a JVM also loads gRPC, Netty and protobuf classes and starts the channel:
     * seconds of CPU when several JVMs start at once on a small machine, which is not etcd's silence.
     * So the CPU time this process spends while it waits is added to the bound (at most
     * {@link #ALLOWANCE_NANOS}): a paused or silent etcd leaves the process idle and fails connect
     * within {@code timeout}; a busy start-up gets the time it spends.
     */
    static final class Startup {
        static final long ALLOWANCE_NANOS = TimeUnit.SECONDS.toNanos(10);

        private final long start = System.nanoTime();
        private final long cpuAtStart = processCpuNanos();
        private final Duration bound;

        Startup(Duration bound) {
            this.bound = bound;
        }

        <T> T await(EtcdLockBackend backend, String what, CompletableFuture<T> future) {
            try {
                while (true) {
                    long credit = Math.min(ALLOWANCE_NANOS, Math.max(0, processCpuNanos() - cpuAtStart));
                    long left = start + bound.toNanos() + credit - System.nanoTime();
                    try {
                        return future.get(Math.max(0, left), TimeUnit.NANOSECONDS);
                    } catch (TimeoutException e) {
                        long newCredit = Math.min(ALLOWANCE_NANOS, Math.max(0, processCpuNanos() - cpuAtStart));
                        if (newCredit - credit < TimeUnit.MILLISECONDS.toNanos(10)) {
                            future.cancel(true);
                            throw backend.silent(null, what, start, bound.plusNanos(newCredit), e);
                        }
                    }
                }
            } catch (ExecutionException e) {
                throw backend.failed(null, what, start, bound.plusNanos(ALLOWANCE_NANOS), e.getCause());
            } catch (InterruptedException e) {
                future.cancel(true);
                Thread.currentThread().interrupt();
                throw new LockException(null, "interrupted while " + what + " at etcd " + backend.where, e);
            }
        }

        private static long processCpuNanos() {
            java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
            return os instanceof com.sun.management.OperatingSystemMXBean
                    ? ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime() : 0;
        }
    }

    Client client() {
        return client;
    }

    Duration timeout() {
        return timeout;
    }

    private String prefix(String lockName) {
        return prefix(namespace, lockName);
    }

    /** The key prefix of a lock's queue: {@code namespace}, the escaped name, and '/'. */
    static String prefix(String namespace, String lockName) {
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

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
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
