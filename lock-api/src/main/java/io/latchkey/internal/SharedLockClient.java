package io.latchkey.internal;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockCallable;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockListener;
import io.latchkey.LockLostException;
import io.latchkey.LockOptions;
import io.latchkey.LockRequest;
import io.latchkey.LockResult;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
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
 *   <li>at most {@value #RELEASE_THREADS} threads that release lost locks, and locks kept for their
 *       {@code atLeast} bound, in the background, each for at most one round trip ({@code timeout});</li>
 *   <li>one event thread that delivers {@link LockListener} events in order, started only once a
 *       listener is registered and an event occurs; it queues at most {@value #EVENT_QUEUE} events and
 *       drops (and logs) further ones, so a stuck listener never blocks a lock.</li>
 * </ul>
 * Idle pool threads end after 30 seconds, so an idle client keeps only its timer.
 *
 * <p>Per-call bounds ({@link LockRequest}): {@code atMost} is a second deadline of the grant's
 * {@link Validity}; {@code atLeast} makes the end of the grant hand the lock to the backend's expiry
 * ({@link BackendLease#releaseAfter}) or, if the backend cannot, keep the backend lock and the local
 * permit until the bound passes (a "lingering" grant, released by the timer through a release thread). A backend's own
 * threads come on top and are documented by each backend.
 */
final class SharedLockClient implements LockClient {

    /** Threads that run {@code tryLockAsync} calls at once, per client. */
    static final int ASYNC_THREADS = 16;
    /** Threads that release lost locks in the background, per client. */
    static final int RELEASE_THREADS = 2;
    /** Events queued for the event thread at most, per client. */
    static final int EVENT_QUEUE = 10_000;

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
    private final ThreadPoolExecutor events;
    private final List<LockListener> listeners;
    private final AtomicLong droppedEvents = new AtomicLong();
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
        this.events = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(EVENT_QUEUE),
                DaemonThreads.factory(prefix + "-events"));
        this.events.allowCoreThreadTimeOut(true);
        this.listeners = new CopyOnWriteArrayList<>(options.listeners());
    }

    @Override
    public void addListener(LockListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    @Override
    public void removeListener(LockListener listener) {
        listeners.remove(listener);
    }

    @Override
    public String backendName() {
        return backendName;
    }

    /** Queues one event for every listener; never blocks and never throws. */
    private void emit(String lockName, Consumer<LockListener> event) {
        if (listeners.isEmpty()) {
            return;
        }
        try {
            events.execute(() -> {
                for (LockListener listener : listeners) {
                    try {
                        event.accept(listener);
                    } catch (RuntimeException e) {
                        log.warn("lock listener {} failed on an event of lock '{}' ({}); the lock is not affected",
                                listener, lockName, backend.describe(lockName), e);
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            long dropped = droppedEvents.incrementAndGet();
            if (!events.isShutdown() && (dropped == 1 || dropped % 1000 == 0)) {
                log.warn("lock listeners of {} fall behind: {} events dropped so far, the latest for lock '{}';"
                        + " make listeners return quickly", backendName, dropped, lockName);
            }
        }
    }

    private void emitAcquireFailed(String name, long callStart, LockException e) {
        Duration waited = Duration.ofNanos(System.nanoTime() - callStart);
        emit(name, l -> l.acquireFailed(name, waited, e));
        if (e instanceof LockBackendUnavailableException) {
            emit(name, l -> l.backendUnavailable(name, (LockBackendUnavailableException) e));
        }
    }

    private void emitNotAcquired(String name, long callStart) {
        Duration waited = Duration.ofNanos(System.nanoTime() - callStart);
        emit(name, l -> l.notAcquired(name, waited));
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
                if (grant.lingering) {
                    grant.finishLinger();
                } else {
                    grant.end(true);
                }
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
        events.shutdown(); // the events of the close itself are still delivered
        try {
            long wait = options.timeout().toNanos();
            if (!events.awaitTermination(wait, TimeUnit.NANOSECONDS)) {
                events.shutdownNow();
            }
            workers.awaitTermination(wait, TimeUnit.NANOSECONDS);
            if (!releasers.awaitTermination(wait, TimeUnit.NANOSECONDS)) {
                releasers.shutdownNow();
            }
            timer.awaitTermination(wait, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            releasers.shutdownNow();
            events.shutdownNow();
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

    private Optional<Lease> acquire(String name, Deadline deadline, boolean threadOwned, LockRequest request)
            throws InterruptedException {
        ensureOpen();
        long callStart = System.nanoTime();
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
                emitNotAcquired(name, callStart);
                return Optional.empty();
            }
            ensureOpen();
            Validity validity = new Validity(name, backend.describe(name), options.safetyMargin(), timer);
            Duration atMost = request == null ? null : request.atMost().orElse(null);
            if (atMost != null) {
                // From before the request is sent: the lease ends no later than the real acquisition + atMost.
                validity.limit(System.nanoTime() + atMost.toNanos(), "held for its atMost of " + Durations.format(atMost)
                        + "; the lock is released in the background");
            }
            BackendLease backendLease;
            try {
                backendLease = acquireFromBackend(name, deadline, validity);
            } catch (LockException e) {
                emitAcquireFailed(name, callStart, e);
                throw e;
            }
            if (backendLease == null) {
                emitNotAcquired(name, callStart);
                return Optional.empty();
            }
            Grant grant = new Grant(local, backendLease, validity);
            Duration atLeast = request == null ? null : request.atLeast().orElse(null);
            if (atLeast != null) {
                // From after the grant returned: the lock is kept until no earlier than acquisition + atLeast.
                grant.atLeastUntil = grant.grantedAt + atLeast.toNanos();
                grant.hasAtLeast = true;
            }
            if (!validity.start(lost -> {
                releaseInBackground(grant::releaseBackendQuietly);
                emit(name, l -> l.lost(name, lost));
            })) {
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
            Duration waited = Duration.ofNanos(grant.grantedAt - callStart);
            emit(name, l -> l.acquired(name, waited, grant.token));
            return Optional.of(new SharedLease(grant, true));
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

    private void releaseInBackground(Runnable release) {
        try {
            releasers.execute(release);
        } catch (RejectedExecutionException e) {
            release.run();
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
        final long grantedAt = System.nanoTime();
        final AtomicBoolean backendReleased = new AtomicBoolean();
        final AtomicBoolean finished = new AtomicBoolean();
        long atLeastUntil; // set before the grant is shared
        boolean hasAtLeast; // set before the grant is shared
        volatile boolean skipAtLeast;
        volatile boolean lingering;
        volatile ScheduledFuture<?> lingerEnd;
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
            return new SharedLease(this, false);
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

        void end() {
            end(false);
        }

        /**
         * Ends the grant: no more loss signals, the backend lock released (or, within its atLeast
         * bound, handed to the backend's expiry or kept until the bound passes), the local permit
         * returned.
         */
        void end(boolean clientClosing) {
            synchronized (local) {
                if (ended) {
                    return;
                }
                ended = true;
                local.grant = null;
                local.owner = null;
            }
            validity.close();
            long endedAt = System.nanoTime();
            Duration held = Duration.ofNanos(endedAt - grantedAt);
            emit(local.name, l -> l.released(local.name, held));
            long linger = atLeastUntil - endedAt;
            if (hasAtLeast && !skipAtLeast && linger > 0 && handOverOrLinger(linger, clientClosing)) {
                return;
            }
            try {
                if (backendReleased.compareAndSet(false, true)) {
                    backendLease.release();
                }
            } catch (LockBackendUnavailableException e) {
                emit(local.name, l -> l.backendUnavailable(local.name, e));
                throw e;
            } finally {
                finish();
            }
        }

        /**
         * Within the atLeast bound: lets the backend's expiry keep the lock, or keeps it here.
         *
         * @return true if the grant lingers and is finished later; false if the caller finishes it now
         */
        private boolean handOverOrLinger(long lingerNanos, boolean clientClosing) {
            if (!backendReleased.compareAndSet(false, true)) {
                return false; // lost and released already: nothing to keep
            }
            boolean handed;
            try {
                handed = backendLease.releaseAfter(Duration.ofNanos(lingerNanos));
            } catch (RuntimeException e) {
                finish();
                if (e instanceof LockBackendUnavailableException) {
                    emit(local.name, l -> l.backendUnavailable(local.name, (LockBackendUnavailableException) e));
                }
                throw e;
            }
            if (handed) {
                return false;
            }
            backendReleased.set(false);
            if (clientClosing) {
                return false; // the client keeps nothing after close: atLeast ends here, as documented
            }
            lingering = true;
            try {
                lingerEnd = timer.schedule(() -> releaseInBackground(this::finishLinger), lingerNanos, TimeUnit.NANOSECONDS);
                return true;
            } catch (RejectedExecutionException e) {
                lingering = false;
                return false;
            }
        }

        /** Ends a lingering grant: releases the backend lock and returns the local permit. */
        void finishLinger() {
            ScheduledFuture<?> pending = lingerEnd;
            if (pending != null) {
                pending.cancel(false);
            }
            try {
                releaseBackendQuietly();
            } finally {
                finish();
            }
        }

        /** Returns the local permit; once. */
        private void finish() {
            if (finished.compareAndSet(false, true)) {
                grants.remove(this);
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
                if (e instanceof LockBackendUnavailableException) {
                    emit(local.name, l -> l.backendUnavailable(local.name, (LockBackendUnavailableException) e));
                }
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
        /** Whether this lease started its grant (rather than nesting in one). */
        private final boolean fresh;
        private final AtomicBoolean closed = new AtomicBoolean();

        SharedLease(Grant grant, boolean fresh) {
            this.grant = grant;
            this.fresh = fresh;
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
            return acquire(name, deadlineAfter(name, wait), true, null);
        }

        @Override
        public Optional<Lease> tryLock(LockRequest request) throws InterruptedException {
            Objects.requireNonNull(request, "request");
            if (request.slot().isPresent()) {
                throw new IllegalArgumentException("a slot applies to runLocked and callLocked only, not to tryLock of lock '"
                        + name + "': " + request);
            }
            return acquire(name, deadlineAfter(name, request.waitTime()), true, request);
        }

        @Override
        public <T> LockResult<T> callLocked(LockRequest request, LockCallable<T> task) throws InterruptedException {
            Objects.requireNonNull(request, "request");
            Objects.requireNonNull(task, "task");
            Optional<Lease> maybe = acquire(name, deadlineAfter(name, request.waitTime()), true, request);
            if (maybe.isEmpty()) {
                return LockResult.notAcquired();
            }
            SharedLease lease = (SharedLease) maybe.get();
            try {
                return runUnder(lease, request, task);
            } finally {
                lease.close();
            }
        }

        private <T> LockResult<T> runUnder(SharedLease lease, LockRequest request, LockCallable<T> task) {
            Grant grant = lease.grant;
            Instant slot = request.slot().orElse(null);
            if (slot != null) {
                Optional<Instant> recorded = readSlot(grant);
                if (!lease.isValid()) {
                    return LockResult.lost(grant.token, lossOf(grant), false, null, null);
                }
                if (recorded.isPresent() && !slot.isAfter(recorded.get())) {
                    if (lease.fresh) {
                        grant.skipAtLeast = true; // nothing ran: no reason to keep others out
                    }
                    Instant last = recorded.get();
                    emit(name, l -> l.slotSkipped(name, slot, last));
                    log.debug("lock '{}' ({}): slot {} skipped, the backend records {} as completed", name,
                            backend.describe(name), slot, last);
                    return LockResult.slotDone(grant.token, last);
                }
            }
            if (!lease.isValid()) {
                return LockResult.lost(grant.token, lossOf(grant), false, null, null);
            }
            TaskRun run = new TaskRun(Thread.currentThread(), request.interruptOnLoss());
            lease.lost().whenComplete((l, e) -> run.lost());
            T value = null;
            Exception failure = null;
            try {
                value = task.call(lease);
            } catch (Exception e) {
                failure = e;
            } finally {
                run.finish();
            }
            if (!lease.isValid()) {
                return LockResult.lost(grant.token, lossOf(grant), true, value, failure);
            }
            if (slot != null && (failure == null || request.markSlotOnFailure())) {
                try {
                    grant.backendLease.recordCompletedSlot(slot);
                } catch (LockLostException e) {
                    grant.validity.lost("the backend refused to record slot " + slot + ": " + e.getMessage(), e);
                    return LockResult.lost(grant.token, e, true, value, failure);
                }
            }
            return failure == null ? LockResult.ran(grant.token, value) : LockResult.failed(grant.token, failure);
        }

        private Optional<Instant> readSlot(Grant grant) {
            if (!grant.backendLease.recordsSlots()) {
                throw new LockException(name, "lock '" + name + "' (" + backend.describe(name) + "): the " + backendName
                        + " backend does not record schedule slots; run without a slot, or use a backend that records them");
            }
            try {
                return grant.backendLease.lastCompletedSlot();
            } catch (LockException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new LockException(name, "reading the last completed slot of lock '" + name + "' ("
                        + backend.describe(name) + ") failed: " + e, e);
            }
        }

        private LockLostException lossOf(Grant grant) {
            LockLostException loss = grant.validity.loss();
            return loss != null ? loss : new LockLostException(name, "lock '" + name + "' (" + backend.describe(name)
                    + ") is not valid");
        }

        @Override
        public boolean isHeldByCurrentThread() {
            Grant grant = grantOf(true);
            return grant != null && grant.validity.isValid();
        }

        @Override
        public int holdCount() {
            LocalLock local = locals.get(name);
            if (local == null) {
                return 0;
            }
            synchronized (local) {
                return local.grant != null && local.owner == Thread.currentThread() ? local.grant.holds : 0;
            }
        }

        @Override
        public boolean isHeldByThisClient() {
            Grant grant = grantOf(false);
            return grant != null && grant.validity.isValid();
        }

        private Grant grantOf(boolean ownedByCurrentThread) {
            LocalLock local = locals.get(name);
            if (local == null) {
                return null;
            }
            synchronized (local) {
                return !ownedByCurrentThread || local.owner == Thread.currentThread() ? local.grant : null;
            }
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
                        Optional<Lease> lease = acquire(name, deadline, false, null);
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

    /**
     * The thread of a task run under a lease, interrupted if the lease is lost while the task runs.
     * The interrupt happens under this object's lock and only while the task runs, so that
     * {@link #finish} can clear exactly the interrupt it caused.
     */
    private static final class TaskRun {
        private final Thread thread;
        private final boolean interruptOnLoss;
        private boolean running = true;
        private boolean interrupted;

        TaskRun(Thread thread, boolean interruptOnLoss) {
            this.thread = thread;
            this.interruptOnLoss = interruptOnLoss;
        }

        synchronized void lost() {
            if (running && interruptOnLoss) {
                interrupted = true;
                thread.interrupt();
            }
        }

        /** Called by the task's thread once the task returned. */
        synchronized void finish() {
            running = false;
            if (interrupted) {
                Thread.interrupted();
            }
        }
    }
}
