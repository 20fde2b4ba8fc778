package io.latchkey.internal;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LockBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client layer every backend shares: per-thread reentrancy, local gating, validity deadlines,
 * loss signalling, asynchronous acquisition and closing on shutdown.
 *
 * <p>Per lock name the client keeps one {@link LocalLock}: a fair one-permit semaphore (not a
 * {@code ReentrantLock}, so that any thread may release it) that admits one contender of this
 * client to the backend at a time. The permit is held from the moment a contender is admitted
 * until the last lease of its grant closes. Entries are reference-counted and dropped when unused,
 * so a million distinct names over time leave nothing behind.
 *
 * <p>Threads, all daemons named {@code latchkey-<backend>-<n>-...}, with fixed bounds:
 * <ul>
 *   <li>one timer, which ends validity deadlines and completes {@code lost()};</li>
 *   <li>at most {@value #ASYNC_THREADS} threads for {@code tryLockAsync}, each busy for the wait of
 *       one call; further calls queue, their wait counting from the call, and when one starts after
 *       its wait has run out it still tries the lock once without waiting;</li>
 *   <li>at most {@value #RELEASE_THREADS} threads that release lost locks in the background, each for
 *       at most one round trip ({@code timeout}).</li>
 * </ul>
 * Idle pool threads end after 30 seconds, so an idle client keeps only its timer. A backend's own
 * threads come on top and are documented by each backend.
 */
final class SharedLockClient implements LockClient {

    /** Threads that run {@code tryLockAsync} calls at once, per client. */
    static final int ASYNC_THREADS = 16;
    /** Threads that release lost locks in the background, per client. */
    static final int RELEASE_THREADS = 2;

    private static final Logger log = LoggerFactory.getLogger(SharedLockClient.class);
    private static final AtomicInteger CLIENTS = new AtomicInteger();

    private final String backendName;
    private final LockBackend backend;
    private final LockOptions options;
    private final ConcurrentHashMap<String, LocalLock> locals = new ConcurrentHashMap<>();
    private final Set<Grant> grants = ConcurrentHashMap.newKeySet();
    private final ScheduledThreadPoolExecutor timer;
    private final ExecutorService workers;
    private final ExecutorService releasers;
    private final AtomicBoolean closed = new AtomicBoolean();

    SharedLockClient(String backendName, LockBackend backend, LockOptions options) {
        this.backendName = Objects.requireNonNull(backendName, "backendName");
        this.backend = Objects.requireNonNull(backend, "backend");
        this.options = Objects.requireNonNull(options, "options");
        int id = CLIENTS.incrementAndGet();
        String prefix = "latchkey-" + backendName + "-" + id;
        this.timer = new ScheduledThreadPoolExecutor(1, DaemonThreads.factory(prefix + "-timer"));
        this.timer.setRemoveOnCancelPolicy(true);
        this.workers = boundedPool(ASYNC_THREADS, prefix + "-async");
        this.releasers = boundedPool(RELEASE_THREADS, prefix + "-release");
    }

    /** A pool of at most {@code threads} threads that queues beyond them and lets idle threads end. */
    private static ThreadPoolExecutor boundedPool(int threads, String prefix) {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), DaemonThreads.factory(prefix));
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    @Override
    public DistributedLock lock(String name) {
        ensureOpen();
        LockNames.validate(name);
        return new Handle(name);
    }

    @Override
    public LockOptions options() {
        return options;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (Grant grant : List.copyOf(grants)) {
            try {
                grant.end();
            } catch (RuntimeException e) {
                log.warn("closing client: release of lock '{}' ({}) failed; it expires on its own within {}",
                        grant.local.name, backend.describe(grant.local.name), options.lease(), e);
            }
        }
        // Waiting acquisitions are interrupted; releases of lost locks already under way may finish,
        // within one round trip, so that the backend is not left holding them until they expire.
        workers.shutdownNow();
        releasers.shutdown();
        timer.shutdownNow();
        try {
            long wait = options.timeout().toNanos();
            workers.awaitTermination(wait, TimeUnit.NANOSECONDS);
            if (!releasers.awaitTermination(wait, TimeUnit.NANOSECONDS)) {
                releasers.shutdownNow();
            }
            timer.awaitTermination(wait, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            releasers.shutdownNow();
            Thread.currentThread().interrupt();
        } finally {
            backend.close();
        }
    }

    @Override
    public String toString() {
        return "LockClient{" + backendName + (closed.get() ? ", closed" : "") + '}';
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("lock client for " + backendName + " is closed");
        }
    }

    private Optional<Lease> acquire(String name, Deadline deadline, boolean threadOwned) throws InterruptedException {
        ensureOpen();
        Thread me = Thread.currentThread();
        LocalLock local = retain(name);
        boolean permit = false;
        boolean handedToGrant = false;
        try {
            if (threadOwned) {
                synchronized (local) {
                    if (local.grant != null && local.owner == me) {
                        return Optional.of(local.grant.nest());
                    }
                }
            }
            permit = local.gate.tryAcquire(deadline.remainingNanos(), TimeUnit.NANOSECONDS);
            if (!permit) {
                return Optional.empty();
            }
            ensureOpen();
            Validity validity = new Validity(name, backend.describe(name), options.safetyMargin(), timer);
            BackendLease backendLease = acquireFromBackend(name, deadline, validity);
            if (backendLease == null) {
                return Optional.empty();
            }
            Grant grant = new Grant(local, backendLease, validity);
            if (!validity.start(lost -> releaseInBackground(grant))) {
                grant.releaseBackendQuietly();
                throw new LockException(name, "lock '" + name + "' (" + backend.describe(name) + ") was granted,"
                        + " but its validity ended before the grant returned: " + validity.describeState()
                        + "; the lease is shorter than an acquire takes, raise the lease option");
            }
            synchronized (local) {
                local.grant = grant;
                local.owner = threadOwned ? me : null;
                grant.holds = 1;
            }
            grants.add(grant);
            handedToGrant = true;
            if (closed.get()) {
                grant.end();
                throw new IllegalStateException("lock client for " + backendName + " was closed while lock '"
                        + name + "' was being acquired; the lock was released");
            }
            return Optional.of(new SharedLease(grant));
        } finally {
            if (!handedToGrant) {
                if (permit) {
                    local.gate.release();
                }
                unretain(local);
            }
        }
    }

    /** The deadline of a call that waits {@code wait}, counted from now. */
    private static Deadline deadlineAfter(String name, Duration wait) {
        Objects.requireNonNull(wait, "wait");
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait for lock '" + name + "' must not be negative: " + Durations.format(wait));
        }
        return Deadline.after(wait);
    }

    private BackendLease acquireFromBackend(String name, Deadline deadline, Validity validity) throws InterruptedException {
        try {
            return backend.acquire(name, deadline, validity);
        } catch (LockException | IllegalArgumentException | IllegalStateException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new LockException(name, "acquiring lock '" + name + "' (" + backend.describe(name) + ") failed: " + e, e);
        }
    }

    private void releaseInBackground(Grant grant) {
        try {
            releasers.execute(grant::releaseBackendQuietly);
        } catch (RejectedExecutionException e) {
            grant.releaseBackendQuietly();
        }
    }

    private LocalLock retain(String name) {
        return locals.compute(name, (k, v) -> {
            LocalLock l = v == null ? new LocalLock(k) : v;
            l.refs++;
            return l;
        });
    }

    private void unretain(LocalLock local) {
        locals.computeIfPresent(local.name, (k, v) -> v != local || --v.refs > 0 ? v : null);
    }

    /** How many lock names this client currently tracks; for tests of contract rule 10 (docs/contract.md). */
    int trackedNames() {
        return locals.size();
    }

    /** Local state of one lock name in this client. */
    private static final class LocalLock {
        final String name;
        final java.util.concurrent.Semaphore gate = new java.util.concurrent.Semaphore(1, true);
        int refs; // guarded by the map's compute
        Grant grant; // guarded by this
        Thread owner; // guarded by this; null for a lease acquired asynchronously

        LocalLock(String name) {
            this.name = name;
        }
    }

    /** One grant of the backend lock, shared by its nested leases. */
    private final class Grant {
        final LocalLock local;
        final BackendLease backendLease;
        final Validity validity;
        final long token;
        final AtomicBoolean backendReleased = new AtomicBoolean();
        int holds; // guarded by local
        boolean ended; // guarded by local

        Grant(LocalLock local, BackendLease backendLease, Validity validity) {
            this.local = local;
            this.backendLease = backendLease;
            this.validity = validity;
            this.token = backendLease.fencingToken();
        }

        /** Called holding the local lock, by the owning thread. */
        SharedLease nest() {
            validity.ensureValidForNesting();
            holds++;
            return new SharedLease(this);
        }

        void leaseClosed() {
            boolean last;
            synchronized (local) {
                last = !ended && --holds == 0;
            }
            if (last) {
                end();
            }
        }

        /** Ends the grant: no more loss signals, the backend lock released, the local permit returned. */
        void end() {
            synchronized (local) {
                if (ended) {
                    return;
                }
                ended = true;
                local.grant = null;
                local.owner = null;
            }
            validity.close();
            grants.remove(this);
            try {
                if (backendReleased.compareAndSet(false, true)) {
                    backendLease.release();
                }
            } finally {
                local.gate.release();
                unretain(local);
            }
        }

        boolean ended() {
            synchronized (local) {
                return ended;
            }
        }

        void releaseBackendQuietly() {
            if (!backendReleased.compareAndSet(false, true)) {
                return;
            }
            try {
                backendLease.release();
            } catch (RuntimeException e) {
                // Expected when the loss came from losing the backend: one line, the trace only for debugging.
                log.warn("release of lost lock '{}' ({}) failed; it expires on its own: {}", local.name,
                        backend.describe(local.name), e.getMessage());
                log.debug("release of lost lock '{}' failed", local.name, e);
            }
        }
    }

    /** One lease handed to the application. */
    private final class SharedLease implements Lease {
        private final Grant grant;
        private final AtomicBoolean closed = new AtomicBoolean();

        SharedLease(Grant grant) {
            this.grant = grant;
        }

        @Override
        public String lockName() {
            return grant.local.name;
        }

        @Override
        public long fencingToken() {
            return grant.token;
        }

        @Override
        public boolean isValid() {
            return !closed.get() && !grant.ended() && grant.validity.isValid();
        }

        @Override
        public void ensureValid() {
            if (closed.get() || grant.ended()) {
                throw new IllegalStateException("lease of lock '" + lockName() + "' is closed");
            }
            grant.validity.ensureValid();
        }

        @Override
        public Duration remaining() {
            return closed.get() || grant.ended() ? Duration.ZERO : grant.validity.remaining();
        }

        @Override
        public java.util.concurrent.CompletionStage<io.latchkey.LockLostException> lost() {
            return grant.validity.lostStage();
        }

        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                grant.leaseClosed();
            }
        }

        @Override
        public String toString() {
            return "Lease{lock='" + lockName() + "', token=" + fencingToken() + ", valid=" + isValid() + '}';
        }
    }

    /** The application's handle on one lock name. */
    private final class Handle implements DistributedLock {
        private final String name;

        Handle(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public Optional<Lease> tryLock(Duration wait) throws InterruptedException {
            return acquire(name, deadlineAfter(name, wait), true);
        }

        @Override
        public CompletableFuture<Optional<Lease>> tryLockAsync(Duration wait) {
            Deadline deadline = deadlineAfter(name, wait);
            ensureOpen();
            CompletableFuture<Optional<Lease>> result = new CompletableFuture<>();
            Future<?> task;
            try {
                task = workers.submit(() -> {
                    try {
                        Optional<Lease> lease = acquire(name, deadline, false);
                        if (!result.complete(lease)) {
                            lease.ifPresent(Lease::close); // cancelled meanwhile: nobody will close it
                        }
                    } catch (InterruptedException e) {
                        result.cancel(false);
                    } catch (Throwable e) {
                        result.completeExceptionally(e);
                    }
                });
            } catch (RejectedExecutionException e) {
                throw new IllegalStateException("lock client for " + backendName + " is closed", e);
            }
            result.whenComplete((r, e) -> {
                if (result.isCancelled()) {
                    task.cancel(true);
                }
            });
            return result;
        }

        @Override
        public String toString() {
            return "DistributedLock{'" + name + "' on " + backendName + '}';
        }
    }

}
