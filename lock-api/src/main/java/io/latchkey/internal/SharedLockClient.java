package io.latchkey.internal;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedReadWriteLock;
import io.latchkey.DistributedSemaphore;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockListener;
import io.latchkey.LockListener.Target;
import io.latchkey.LockListener.Target.Kind;
import io.latchkey.internal.LocalLock.ModeKey;
import io.latchkey.LockOptions;
import io.latchkey.LockRequest;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.ReadWriteBackend;
import io.latchkey.spi.SemaphoreBackend;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
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
 * <p>Per lock name the client keeps one {@link LocalLock}: a one-permit semaphore (not a
 * {@code ReentrantLock}, so that any thread may release it) that admits one contender of this
 * client to the backend at a time, in arrival order on a backend that grants in arrival order, first
 * come while the permit is free on one that does not ({@link LockBackend#fairOrder}). The permit is
 * held from the moment a contender is admitted until the last lease of its grant closes. Entries are
 * reference-counted and dropped when unused, so a million distinct names over time leave nothing behind.
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
 *
 * <p>The pieces, each package-private: {@link LockHandle} (the application's {@code DistributedLock}),
 * {@link LocalLock} (one name's gate), {@link AcquirePath} (the one way every kind of grant is taken
 * from the backend, each kind a {@link GrantKind}), {@link BackendGrant} and its {@link Grant} (one
 * backend lock grant, its end and its atLeast linger), {@link SharedLease} (a lease, nested or not, on
 * a grant), {@link ScheduledRun} ({@code runLocked}/{@code callLocked}: slots and the interrupt on
 * loss), {@link LockEvents} (listeners and their thread) and {@link SharedSemaphores} (semaphores:
 * permits on the same acquire path, validity, loss signal and release threads, released first on
 * close).
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
    /** Whether the local gates admit threads in arrival order: {@link LockBackend#fairOrder}. */
    private final boolean fairGates;
    private final ConcurrentHashMap<Object, LocalLock> locals = new ConcurrentHashMap<>();
    private final Set<Grant> grants = ConcurrentHashMap.newKeySet();
    private final ScheduledThreadPoolExecutor timer;
    private final DeadlineWatch deadlines;
    private final ExecutorService workers;
    private final ExecutorService releasers;
    private final LockEvents events;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final SharedSemaphores semaphores = new SharedSemaphores(this);
    private final AcquirePath acquirePath = new AcquirePath(this);
    /** Election candidacies of this client, closed first when it closes; see {@link Campaign}. */
    final Set<Campaign> campaigns = ConcurrentHashMap.newKeySet();

    SharedLockClient(String backendName, LockBackend backend, LockOptions options) {
        this.backendName = Objects.requireNonNull(backendName, "backendName");
        this.backend = Objects.requireNonNull(backend, "backend");
        this.options = Objects.requireNonNull(options, "options");
        this.fairGates = backend.fairOrder();
        int id = CLIENTS.incrementAndGet();
        String prefix = "latchkey-" + backendName + "-" + id;
        this.timer = new ScheduledThreadPoolExecutor(1, DaemonThreads.factory(prefix + "-timer"));
        this.timer.setRemoveOnCancelPolicy(true);
        this.deadlines = new DeadlineWatch(timer);
        this.workers = boundedPool(ASYNC_THREADS, prefix + "-async");
        this.releasers = boundedPool(RELEASE_THREADS, prefix + "-release");
        this.events = new LockEvents(backendName, this::describe, prefix + "-events", EVENT_QUEUE, options.listeners());
    }

    @Override
    public void addListener(LockListener listener) {
        events.add(listener);
    }

    @Override
    public void removeListener(LockListener listener) {
        events.remove(listener);
    }

    @Override
    public String backendName() {
        return backendName;
    }

    /** The listeners; their events are queued, never block and never throw. */
    LockEvents events() {
        return events;
    }

    /** Where {@code target} lives in the backend, for messages. */
    String describe(Target target) {
        return switch (target.kind()) {
            case LOCK -> backend.describe(target.name());
            case PERMIT -> ((SemaphoreBackend) backend).describeSemaphore(target.name());
            case READ, WRITE -> ((ReadWriteBackend) backend).describeReadWrite(target.name());
        };
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
        return new LockHandle(this, name, Kind.LOCK);
    }

    @Override
    public List<String> list(String prefix, String after, int limit) throws InterruptedException {
        ensureOpen();
        Objects.requireNonNull(prefix, "prefix");
        if (!prefix.isEmpty()) {
            try {
                LockNames.validate(prefix);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("list prefix: " + e.getMessage(), e);
            }
        }
        if (after != null) {
            LockNames.validate(after);
        }
        if (limit < 1 || limit > MAX_LIST) {
            throw new IllegalArgumentException("list limit must be 1 to " + MAX_LIST + ", got " + limit + " (prefix '"
                    + LockNames.printable(prefix) + "'): take larger namespaces page by page, each after the last"
                    + " name of the one before");
        }
        // the promise of order, prefix, page and size is kept here, whatever a backend hands back
        return backend.list(prefix, after, limit).stream()
                .filter(n -> n.startsWith(prefix) && (after == null || n.compareTo(after) > 0))
                .sorted().distinct().limit(limit).toList();
    }

    /** The backend as read-write locks' ({@link #readWriteLock} let no handle be made without one). */
    ReadWriteBackend readWriteBackend() {
        return (ReadWriteBackend) backend;
    }

    @Override
    public DistributedReadWriteLock readWriteLock(String name) {
        ensureOpen();
        LockNames.validate(name);
        if (!(backend instanceof ReadWriteBackend)) {
            throw new UnsupportedOperationException("the " + backendName + " backend offers no read-write locks"
                    + " (read-write lock '" + name + "' was asked for): " + backend.whyNoReadWriteLocks()
                    + "; use a lock for exclusive access, or another backend");
        }
        return new ReadWriteHandle(this, name);
    }

    @Override
    public DistributedSemaphore semaphore(String name, int permits) {
        return semaphores.semaphore(name, permits);
    }

    @Override
    public LockOptions options() {
        return options;
    }

    @Override
    public void close() {
        if (closed.get()) {
            return;
        }
        // while the client still serves their releases: each tells its listener revoked(CLOSED) first
        List.copyOf(campaigns).forEach(Campaign::close);
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        semaphores.closeAll();
        for (Grant grant : List.copyOf(grants)) {
            try {
                if (grant.lingering) {
                    grant.finishLinger();
                } else {
                    grant.end(true);
                }
            } catch (RuntimeException e) {
                log.warn("closing client: release of {} ({}) failed; it expires on its own within {}",
                        grant.target, describe(grant.target), options.lease(), e);
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
            events.awaitTermination(wait);
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

    boolean isClosed() {
        return closed.get();
    }

    void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("lock client for " + backendName + " is closed");
        }
    }

    /**
     * Acquires lock {@code name} ({@code kind} {@code LOCK}), or read-write lock {@code name}'s read or
     * write mode, for the calling thread ({@code threadOwned}) or for an asynchronous call.
     */
    Optional<Lease> acquire(String name, Kind kind, Deadline deadline, boolean threadOwned, LockRequest request)
            throws InterruptedException {
        ensureOpen();
        long callStart = System.nanoTime();
        Thread me = Thread.currentThread();
        if (threadOwned && kind != Kind.LOCK) {
            SharedLease nested = readWriteReentry(name, kind, me);
            if (nested != null) {
                return Optional.of(nested);
            }
        }
        LockAttempt attempt = new LockAttempt(retain(name, kind, threadOwned ? me : new Object()),
                threadOwned ? me : null, request);
        LocalLock local = attempt.local;
        boolean permit = false;
        try {
            if (threadOwned) {
                synchronized (local) {
                    if (local.grant != null && local.owner == me) {
                        return Optional.of(local.grant.nest(false));
                    }
                }
            }
            permit = local.gate.tryAcquire(deadline.remainingNanos(), TimeUnit.NANOSECONDS);
            if (!permit) {
                events.notAcquired(attempt.target, callStart);
                return Optional.empty();
            }
            ensureOpen();
            Target target = local.target;
            Validity validity = new Validity(name, target.toString(), () -> describe(target), options.safetyMargin(), deadlines);
            Duration atMost = request == null ? null : request.atMost().orElse(null);
            if (atMost != null) {
                // From before the request is sent: the lease ends no later than the real acquisition + atMost.
                validity.limit(System.nanoTime() + atMost.toNanos(), "held for its atMost of " + Durations.format(atMost)
                        + "; the lock is released in the background");
            }
            Grant grant = acquirePath.acquire(attempt, deadline, validity, callStart);
            return grant == null ? Optional.empty() : Optional.of(new SharedLease(grant, true));
        } finally {
            if (!attempt.handedOver) {
                if (permit) {
                    local.gate.release();
                }
                unretain(local);
            }
        }
    }

    /**
     * The rules of a read-write lock between a thread's two modes: a read asked while the thread holds
     * the write grant nests in it; a write asked while the thread holds a read grant would wait for its
     * own reader, and is refused.
     *
     * @return the nested read lease, or null if the request goes on to its own gate
     */
    private SharedLease readWriteReentry(String name, Kind kind, Thread me) {
        if (kind == Kind.READ) {
            LocalLock writers = locals.get(new ModeKey(name, true, null));
            if (writers != null) {
                synchronized (writers) {
                    if (writers.grant != null && writers.owner == me) {
                        return writers.grant.nest(true);
                    }
                }
            }
            return null;
        }
        LocalLock reader = locals.get(new ModeKey(name, false, me));
        if (reader != null) {
            synchronized (reader) {
                if (reader.grant != null) {
                    throw new IllegalStateException("thread '" + me.getName() + "' holds read lock '" + name
                            + "' and asked for its write lock: it would wait for its own read lease for ever;"
                            + " close the read lease first, or take the write lock first and read under it");
                }
            }
        }
        return null;
    }

    /**
     * One call's lock, for {@link AcquirePath}: the name's local permit, held by the call, passes to the
     * grant, which returns it when it ends ({@link #grantFinished}).
     */
    private final class LockAttempt implements GrantKind<BackendLease, Grant> {
        final LocalLock local;
        final Target target;
        private final Thread owner;
        private final Duration atLeast;
        boolean handedOver;

        LockAttempt(LocalLock local, Thread owner, LockRequest request) {
            this.local = local;
            this.target = local.target;
            this.owner = owner;
            this.atLeast = request == null ? null : request.atLeast().orElse(null);
        }

        @Override
        public Target target() {
            return target;
        }

        @Override
        public BackendLease acquire(Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
            return switch (target.kind()) {
                case READ -> ((ReadWriteBackend) backend).acquireRead(local.name, deadline, evidence);
                case WRITE -> ((ReadWriteBackend) backend).acquireWrite(local.name, deadline, evidence);
                default -> backend.acquire(local.name, deadline, evidence);
            };
        }

        @Override
        public Grant grant(BackendLease lease, Validity validity) {
            Grant grant = new Grant(SharedLockClient.this, local, lease, validity);
            if (atLeast != null) {
                // From after the grant returned: the lock is kept until no earlier than acquisition + atLeast.
                grant.atLeastUntil = grant.grantedAt + atLeast.toNanos();
                grant.hasAtLeast = true;
            }
            return grant;
        }

        @Override
        public void handOver(Grant grant) {
            synchronized (local) {
                local.grant = grant;
                local.owner = owner;
                grant.holds = 1;
            }
            grants.add(grant);
            handedOver = true;
        }
    }

    /** The deadline of a call that waits {@code wait}, counted from now. */
    static Deadline deadlineAfter(String name, Duration wait) {
        Objects.requireNonNull(wait, "wait");
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait for lock '" + name + "' must not be negative: " + Durations.format(wait));
        }
        return Deadline.after(wait);
    }

    void releaseInBackground(Runnable release) {
        try {
            releasers.execute(release);
        } catch (RejectedExecutionException e) {
            release.run();
        }
    }

    /**
     * Takes a reference to the gate of {@code name} in {@code kind}: the name's for a lock, the writers'
     * of a read-write lock, or that of the reader {@code holder} (the thread, or one asynchronous call).
     */
    private LocalLock retain(String name, Kind kind, Object holder) {
        Object key = switch (kind) {
            case READ -> new ModeKey(name, false, holder);
            case WRITE -> new ModeKey(name, true, null);
            default -> name;
        };
        Target target = kind == Kind.LOCK ? Target.lock(name) : Target.mode(name, kind == Kind.WRITE);
        return locals.compute(key, (k, v) -> {
            LocalLock l = v == null ? new LocalLock(k, name, target, fairGates) : v;
            l.refs++;
            return l;
        });
    }

    private void unretain(LocalLock local) {
        locals.computeIfPresent(local.key, (k, v) -> v != local || --v.refs > 0 ? v : null);
    }

    AcquirePath acquirePath() {
        return acquirePath;
    }

    LockBackend backend() {
        return backend;
    }

    ScheduledThreadPoolExecutor timer() {
        return timer;
    }

    /** Ends held grants at their deadlines, see {@link DeadlineWatch}. */
    DeadlineWatch deadlines() {
        return deadlines;
    }

    ExecutorService workers() {
        return workers;
    }

    /** The local state of lock {@code name}, or {@code null} if this client tracks none. */
    LocalLock localOf(String name) {
        return locals.get(name);
    }

    /** The local state under {@code key} (a lock's name or a {@link ModeKey}), or {@code null}. */
    LocalLock localAt(Object key) {
        return locals.get(key);
    }

    /** The readers of read-write lock {@code name} this client tracks: its threads' and calls' gates. */
    List<LocalLock> readersOf(String name) {
        return locals.values().stream()
                .filter(l -> l.key instanceof ModeKey k && !k.write() && k.name().equals(name)).toList();
    }

    /** Called once by a grant that ended for good: forgets it and returns its local permit. */
    void grantFinished(Grant grant) {
        grants.remove(grant);
        grant.local.gate.release();
        unretain(grant.local);
    }

    /** How many lock names this client currently tracks; for tests of contract rule 10 (docs/contract.md). */
    int trackedNames() {
        return locals.size();
    }

    /** How many semaphore names this client currently tracks; for tests of rule 10. */
    int trackedSemaphores() {
        return semaphores.trackedNames();
    }

}
