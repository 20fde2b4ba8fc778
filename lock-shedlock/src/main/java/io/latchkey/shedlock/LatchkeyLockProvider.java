package io.latchkey.shedlock;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockRequest;
import io.latchkey.spi.Durations;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ShedLock {@link ExtensibleLockProvider} on any Latchkey {@link LockClient}: {@code @SchedulerLock}
 * jobs keep their code and run on Latchkey's backends, with a loss signal and a fencing token.
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(LockClient latchkey) {
 *     return new LatchkeyLockProvider(latchkey);
 * }
 *
 * @Scheduled(cron = "0 0 * * * *")
 * @SchedulerLock(name = "report", lockAtMostFor = "10m", lockAtLeastFor = "1m")
 * void report() {
 *     Lease lease = LatchkeyLockProvider.currentLease().orElseThrow();
 *     store.write(rows, lease.fencingToken());   // the store refuses a token lower than the last it saw
 * }
 * }</pre>
 *
 * <p>How ShedLock's terms map (see the package documentation for what differs from ShedLock's own
 * providers):
 * <ul>
 *   <li>{@link #lock} is {@link DistributedLock#tryLock(LockRequest)} without waiting: empty if another
 *       node, or another thread here, holds the name.</li>
 *   <li>{@code lockAtMostFor} bounds the hold: when it passes the task's lease turns invalid, its
 *       {@link Lease#lost()} completes (reason {@code AT_MOST}) and the lock is released for the next
 *       node, even if the task still runs. It counts from before the request was sent, on this process's
 *       monotonic clock.</li>
 *   <li>{@code lockAtLeastFor} is Latchkey's {@code atLeast}: {@link SimpleLock#unlock()} closes the
 *       lease and the lock stays taken until the bound passes, in the backend's own expiry where the
 *       backend can (Redis, etcd: it then holds even if this process exits), else kept by this client.</li>
 *   <li>Not reentrant, on purpose, as ShedLock expects: a name this provider holds, or that the calling
 *       thread holds through the client in any way, gives empty at once. (Latchkey's own leases nest per
 *       thread; the provider asks {@link DistributedLock#holdCount()} before it asks the backend, so a
 *       nested lease is never taken.)</li>
 *   <li>{@link SimpleLock#extend} is honest: the Latchkey grant, which Latchkey renews for as long as
 *       the holder lives, is kept as it is (same grant, same fencing token, never released in between),
 *       and only the bounds this provider keeps move to count from now. It returns empty, and frees
 *       the name, once the lease is no longer valid. The old {@code SimpleLock} is then unusable
 *       ({@link IllegalStateException}). An extension's {@code lockAtLeastFor} can lengthen the one
 *       given at lock time (this provider then keeps the lock until it passes) but not shorten it.</li>
 * </ul>
 *
 * <p>The task reaches its lease through {@link #currentLease()}, on the thread that took the lock,
 * while ShedLock runs it: read {@link Lease#fencingToken()}, {@link Lease#isValid()},
 * {@link Lease#remaining()} and {@link Lease#lost()}. The lease's {@code close()} is refused: ShedLock
 * releases the lock when the task returns.
 *
 * <p>Errors: a backend that cannot be reached is a {@link io.latchkey.LockBackendUnavailableException}
 * from {@link #lock} (ShedLock then skips the run and its scheduler logs it), never an empty result; a
 * name that breaks Latchkey's rule of names (non-empty, at most 255 characters, no control characters)
 * is an {@link IllegalArgumentException}. An interrupt while asking the backend gives empty, with the
 * interrupt restored.
 *
 * <p>Thread-safety: thread-safe; create one per {@link LockClient} and share it. The bounds are kept by
 * one daemon thread, {@code latchkey-shedlock-timer-<n>}, which ends after 30 seconds without a bound
 * to keep; the client stays the application's to close, which releases every lock still held.
 */
public final class LatchkeyLockProvider implements ExtensibleLockProvider {

    private static final Logger log = LoggerFactory.getLogger(LatchkeyLockProvider.class);
    private static final AtomicInteger TIMERS = new AtomicInteger();
    /** The grants the calling thread took and has not unlocked, the latest last. */
    private static final ThreadLocal<ArrayDeque<ShedLockLease>> TAKEN = new ThreadLocal<>();

    private final LockClient client;
    private final ConcurrentMap<String, ShedLockLease> held = new ConcurrentHashMap<>();
    private final ScheduledThreadPoolExecutor timer;

    /**
     * A provider that takes ShedLock's locks as Latchkey locks of the same names on {@code client}.
     *
     * @param client a connected client; it stays the caller's to close
     */
    public LatchkeyLockProvider(LockClient client) {
        this.client = Objects.requireNonNull(client, "client");
        int n = TIMERS.incrementAndGet();
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "latchkey-shedlock-timer-" + n);
            t.setDaemon(true);
            return t;
        });
        timer.setKeepAliveTime(30, TimeUnit.SECONDS);
        timer.allowCoreThreadTimeOut(true);
        timer.setRemoveOnCancelPolicy(true);
    }

    /**
     * The Latchkey lease of the lock ShedLock took on the calling thread for the task it runs now (the
     * innermost one if tasks nest), as a {@link Lease}: its fencing token, validity, time left and loss
     * signal, with {@code lockAtMostFor} as a second deadline. Empty on a thread that runs no task under
     * a {@code LatchkeyLockProvider}'s lock. A lease whose {@code lockAtMostFor} passed, or that was lost,
     * is still returned (invalid, with {@code lost()} completed) until ShedLock unlocks it.
     */
    public static Optional<Lease> currentLease() {
        ArrayDeque<ShedLockLease> taken = pruned();
        return taken == null ? Optional.empty() : Optional.of(taken.peekLast());
    }

    /**
     * Takes the lock {@code configuration} names if it is free now.
     *
     * @return the lock, or empty if it is held: by another node, by another thread of this process, by a
     *     grant of this provider still kept for its {@code lockAtLeastFor}, or by the calling thread
     * @throws io.latchkey.LockBackendUnavailableException if the backend cannot be reached within its
     *     {@code timeout}
     * @throws IllegalArgumentException if the name breaks Latchkey's rule of names
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        String name = configuration.getName();
        DistributedLock lock = client.lock(name);
        ShedLockLease previous = held.get(name);
        if (previous != null && !previous.endIfOver()) {
            log.debug("lock '{}' is held by this provider already: not taken again", name);
            return Optional.empty();
        }
        if (lock.holdCount() > 0) {
            // Latchkey would nest a lease for the holding thread; ShedLock's locks do not nest
            log.debug("lock '{}' is held by the calling thread already: not taken again", name);
            return Optional.empty();
        }
        Duration atLeast = configuration.getLockAtLeastFor();
        LockRequest.Builder request = LockRequest.builder();
        if (atLeast.compareTo(Duration.ZERO) > 0) {
            request.atLeast(atLeast);
        }
        long requestedAt = System.nanoTime();
        Optional<Lease> taken;
        try {
            taken = lock.tryLock(request.build());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.debug("lock '{}' not taken: the thread was interrupted", name);
            return Optional.empty();
        }
        if (taken.isEmpty()) {
            return Optional.empty();
        }
        ShedLockLease lease = new ShedLockLease(name, taken.get(), requestedAt, configuration.getLockAtMostFor(),
                atLeast, timer, held);
        held.put(name, lease);
        lease.start();
        ArrayDeque<ShedLockLease> mine = TAKEN.get();
        if (mine == null) {
            mine = new ArrayDeque<>();
            TAKEN.set(mine);
        }
        // a grant of this thread that ended but was never unlocked (taken without ShedLock's executor) is
        // no task's lease any more once the thread takes another
        mine.removeIf(l -> l.state() != ShedLockLease.State.HELD);
        mine.addLast(lease);
        log.debug("lock '{}' taken for ShedLock: at most {}, at least {}, token {}", name,
                Durations.format(configuration.getLockAtMostFor()), Durations.format(atLeast), lease.fencingToken());
        return Optional.of(new Taken(lease));
    }

    /** The calling thread's grants without those ShedLock unlocked; null, and forgotten, if none is left. */
    private static ArrayDeque<ShedLockLease> pruned() {
        ArrayDeque<ShedLockLease> taken = TAKEN.get();
        if (taken == null) {
            return null;
        }
        taken.removeIf(l -> l.state() == ShedLockLease.State.RELEASED);
        if (taken.isEmpty()) {
            TAKEN.remove();
            return null;
        }
        return taken;
    }

    @Override
    public String toString() {
        return "LatchkeyLockProvider{" + client + '}';
    }

    /** One {@link SimpleLock} of a grant: the first, or an extension; each is used once. */
    private static final class Taken implements SimpleLock {
        /** Where one SimpleLock is: usable, used, or ended by an extension that found its lease invalid. */
        private enum Use { OPEN, USED, EXTENSION_REFUSED }

        private final ShedLockLease lease;
        private Use use = Use.OPEN; // guarded by this

        Taken(ShedLockLease lease) {
            this.lease = lease;
        }

        /**
         * Releases the lock, or keeps it until its {@code lockAtLeastFor} passes. After an extension that
         * returned empty it does nothing, once: the grant ended already, and ShedLock's executor unlocks
         * the lock it holds after the task, which must not hide the task's {@code LockCanNotBeExtendedException}.
         *
         * @throws IllegalStateException if this lock was unlocked, or extended, already
         * @throws io.latchkey.LockBackendUnavailableException if the release did not reach the backend; the
         *     lock then expires there within Latchkey's {@code lease}
         */
        @Override
        public void unlock() {
            Use was;
            synchronized (this) {
                was = use;
                if (was == Use.USED) {
                    throw usedAlready();
                }
                use = Use.USED;
            }
            try {
                if (was == Use.OPEN) {
                    lease.unlock();
                }
            } finally {
                pruned();
            }
        }

        /**
         * Moves the bounds to count from now, keeping the same Latchkey grant and token.
         *
         * @return the lock to use from now on, or empty (the lock freed) if its lease is no longer valid
         * @throws IllegalArgumentException if a bound is negative or {@code lockAtLeastFor} exceeds
         *     {@code lockAtMostFor}; this lock is then still usable
         * @throws IllegalStateException if this lock was unlocked, or extended, already
         */
        @Override
        public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
            String name = lease.lockName();
            Objects.requireNonNull(lockAtMostFor, "lockAtMostFor");
            Objects.requireNonNull(lockAtLeastFor, "lockAtLeastFor");
            if (lockAtMostFor.isNegative() || lockAtLeastFor.isNegative()
                    || lockAtLeastFor.compareTo(lockAtMostFor) > 0) {
                throw new IllegalArgumentException("extension of lock '" + name + "' must have 0 <= lockAtLeastFor <="
                        + " lockAtMostFor, got lockAtMostFor=" + lockAtMostFor + ", lockAtLeastFor=" + lockAtLeastFor);
            }
            synchronized (this) {
                if (use != Use.OPEN) {
                    throw usedAlready();
                }
                use = Use.USED;
                if (lease.extend(lockAtMostFor, lockAtLeastFor)) {
                    return Optional.of(new Taken(lease));
                }
                use = Use.EXTENSION_REFUSED;
                return Optional.empty();
            }
        }

        private IllegalStateException usedAlready() {
            return new IllegalStateException("lock '" + lease.lockName() + "' was already unlocked or extended:"
                    + " a ShedLock SimpleLock is used once; after extend() use the lock it returned");
        }

        @Override
        public String toString() {
            return "LatchkeySimpleLock{" + lease.lockName() + ", token " + lease.fencingToken() + '}';
        }
    }
}
