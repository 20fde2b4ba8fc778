package io.latchkey.memory;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockLostException;
import io.latchkey.LockOptions;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.GrantRecord;
import io.latchkey.spi.HolderStamp;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.PermitLease;
import io.latchkey.spi.ReadWriteBackend;
import io.latchkey.spi.SemaphoreBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A backend on an {@link InMemoryServer} that can be made slow, silent or unreachable, for the tests
 * of the shared layer. It renews every held lock at a third of the lease, like a watchdog. Test
 * sources only: never shipped.
 */
public final class InMemoryBackend implements SemaphoreBackend, ReadWriteBackend {

    private static final AtomicLong OWNERS = new AtomicLong();

    private final InMemoryServer server;
    private final Duration lease;
    private final Duration timeout;
    private final ScheduledExecutorService renewer;
    private final Map<String, Held> held = new ConcurrentHashMap<>();
    private final HolderStamp stamp;

    /** Knobs a test turns. */
    public final AtomicBoolean renewing = new AtomicBoolean(true);
    public final AtomicBoolean reachable = new AtomicBoolean(true);
    public volatile Duration acquireDelay = Duration.ZERO;
    /** Whether leases hand atLeast over to the server's expiry ({@link BackendLease#releaseAfter}). */
    public final AtomicBoolean expiryHandover = new AtomicBoolean(false);
    /** Whether leases record schedule slots. */
    public final AtomicBoolean slots = new AtomicBoolean(true);

    /** Observations a test checks. */
    public final AtomicInteger acquireCalls = new AtomicInteger();
    public final AtomicInteger concurrentAcquires = new AtomicInteger();
    public final AtomicInteger maxConcurrentAcquires = new AtomicInteger();
    public final AtomicInteger releases = new AtomicInteger();
    public final AtomicInteger handovers = new AtomicInteger();
    public final AtomicBoolean closed = new AtomicBoolean();

    public InMemoryBackend(InMemoryServer server, Duration lease, Duration timeout) {
        this(server, lease, timeout, LockOptions.defaults());
    }

    /** A backend whose grants carry the owner of {@code options}. */
    public InMemoryBackend(InMemoryServer server, Duration lease, Duration timeout, LockOptions options) {
        this.stamp = new HolderStamp(options);
        this.server = server;
        this.lease = lease;
        this.timeout = timeout;
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "memory-renewer");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public String describe(String lockName) {
        return "memory key '" + lockName + "'";
    }

    @Override
    public BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        acquireCalls.incrementAndGet();
        int now = concurrentAcquires.incrementAndGet();
        maxConcurrentAcquires.accumulateAndGet(now, Math::max);
        try {
            if (!acquireDelay.isZero()) {
                Thread.sleep(acquireDelay.toMillis());
            }
            long owner = OWNERS.incrementAndGet();
            String holder = stamp.forCurrentThread();
            Long token = untilGranted(lockName, "lock '" + lockName + "'", deadline, evidence, () -> {
                long t = server.tryGrant(lockName, owner, lease.toNanos(), holder);
                return t >= 0 ? t : null;
            });
            return token == null ? null : hold(held, new Held(lockName, owner, token, evidence));
        } finally {
            concurrentAcquires.decrementAndGet();
        }
    }

    @Override
    public Optional<GrantRecord> inspect(String lockName) throws InterruptedException {
        if (!reachable.get()) {
            // as a request: it hangs until the client's timeout, then fails
            Thread.sleep(timeout.toMillis());
            throw new LockBackendUnavailableException(lockName, "memory server unreachable", null);
        }
        return server.inspect(lockName);
    }

    @Override
    public String describeSemaphore(String name) {
        return "memory semaphore '" + name + "'";
    }

    @Override
    public PermitLease acquirePermit(String name, int permits, Deadline deadline, LeaseEvidence evidence)
            throws InterruptedException {
        acquireCalls.incrementAndGet();
        long owner = OWNERS.incrementAndGet();
        long[] granted = untilGranted(name, "semaphore '" + name + "'", deadline, evidence,
                () -> server.tryGrantPermit(name, permits, owner, lease.toNanos()));
        return granted == null ? null : hold(permitsHeld, new Permit(name, (int) granted[0], owner, granted[1], evidence));
    }

    @Override
    public String describeReadWrite(String name) {
        return "memory read-write lock '" + name + "'";
    }

    @Override
    public BackendLease acquireRead(String name, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        return acquireMode(name, false, deadline, evidence);
    }

    @Override
    public BackendLease acquireWrite(String name, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        return acquireMode(name, true, deadline, evidence);
    }

    private BackendLease acquireMode(String name, boolean write, Deadline deadline, LeaseEvidence evidence)
            throws InterruptedException {
        acquireCalls.incrementAndGet();
        long owner = OWNERS.incrementAndGet();
        Long token = null;
        try {
            token = untilGranted(name, (write ? "write" : "read") + " lock '" + name + "'", deadline, evidence, () -> {
                long t = server.tryGrantMode(name, write, owner, lease.toNanos());
                return t >= 0 ? t : null;
            });
        } finally {
            if (token == null) {
                server.leaveMode(name, owner);
            }
        }
        return token == null ? null : hold(modesHeld, new ModeHeld(name, owner, token, evidence));
    }

    private final Map<String, ModeHeld> modesHeld = new ConcurrentHashMap<>();

    /** How many read and write grants this backend holds. */
    public int heldModeCount() {
        return modesHeld.size();
    }

    /** Reports a loss of every held read and write grant of that name, as a session expiry would. */
    public void signalModeLoss(String name, String reason) {
        modesHeld.values().stream().filter(h -> h.name.equals(name)).forEach(h -> h.evidence.lost(reason, null));
    }

    private final class ModeHeld extends Renewed implements BackendLease {

        ModeHeld(String name, long owner, long token, LeaseEvidence evidence) {
            super(name, owner, token, evidence);
        }

        @Override
        boolean renewOnServer() {
            return server.renewMode(name, owner, lease.toNanos());
        }

        @Override
        String lossReason() {
            return "memory server no longer has this reader or writer";
        }

        @Override
        public long fencingToken() {
            return token;
        }

        @Override
        public void release() {
            release(modesHeld, "read-write lock '" + name + "'", () -> server.releaseMode(name, owner));
        }
    }

    /**
     * Asks the server with {@code tryOnce} (null: not granted) until it grants or {@code deadline}
     * passes (then null); an unreachable server hangs until the client's timeout, then fails.
     */
    private <T> T untilGranted(String name, String what, Deadline deadline, LeaseEvidence evidence, Supplier<T> tryOnce)
            throws InterruptedException {
        while (true) {
            if (!reachable.get()) {
                // An unreachable server: the request hangs until the client's timeout, then fails.
                Thread.sleep(timeout.toMillis());
                throw new LockBackendUnavailableException(name,
                        "memory server did not answer within " + timeout + " for " + what, null);
            }
            long sentAt = System.nanoTime();
            T granted = tryOnce.get();
            if (granted != null) {
                evidence.confirmed(sentAt, lease);
                return granted;
            }
            long left = deadline.nanoTime() - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            server.awaitChange(left);
        }
    }

    /** Records {@code lease} as held in {@code heldIn} and starts renewing it. */
    private static <T extends Renewed> T hold(Map<String, T> heldIn, T lease) {
        heldIn.put(lease.key(), lease);
        lease.schedule();
        return lease;
    }

    private final Map<String, Permit> permitsHeld = new ConcurrentHashMap<>();

    /** Reports a loss of every held permit of that semaphore, as a session expiry would. */
    public void signalPermitLoss(String name, String reason) {
        permitsHeld.values().stream().filter(p -> p.name.equals(name)).forEach(p -> p.evidence.lost(reason, null));
    }

    /** How many permits this backend holds. */
    public int heldPermitCount() {
        return permitsHeld.size();
    }

    /** A lock or a permit held of the server, renewed at a third of the lease like a watchdog. */
    private abstract class Renewed {
        final String name;
        final long owner;
        final long token;
        final LeaseEvidence evidence;
        volatile ScheduledFuture<?> renewal;

        Renewed(String name, long owner, long token, LeaseEvidence evidence) {
            this.name = name;
            this.owner = owner;
            this.token = token;
            this.evidence = evidence;
        }

        /** Renews on the server: whether it still has this owner. */
        abstract boolean renewOnServer();

        /** Why a renewal the server refused means the lease is lost. */
        abstract String lossReason();

        final String key() {
            return name + "#" + owner;
        }

        final void schedule() {
            long period = Math.max(1, lease.toMillis() / 3);
            renewal = renewer.scheduleAtFixedRate(this::renew, period, period, TimeUnit.MILLISECONDS);
        }

        final void renew() {
            if (!renewing.get() || !reachable.get()) {
                return;
            }
            long sentAt = System.nanoTime();
            if (renewOnServer()) {
                evidence.confirmed(sentAt, lease);
            } else {
                evidence.lost(lossReason(), null);
                renewal.cancel(false);
            }
        }

        final void stopRenewing() {
            if (renewal != null) {
                renewal.cancel(false);
            }
        }

        /** Stops renewing and forgets the lease in {@code heldIn}; then releases it on the server, unless unreachable. */
        final void release(Map<String, ? extends Renewed> heldIn, String what, Runnable onServer) {
            releases.incrementAndGet();
            stopRenewing();
            heldIn.remove(key());
            if (!reachable.get()) {
                throw new LockBackendUnavailableException(name, "memory server unreachable: release of " + what
                        + " not sent", null);
            }
            onServer.run();
        }
    }

    private final class Permit extends Renewed implements PermitLease {
        final int slot;

        Permit(String name, int slot, long owner, long token, LeaseEvidence evidence) {
            super(name, owner, token, evidence);
            this.slot = slot;
        }

        @Override
        boolean renewOnServer() {
            return server.renewPermit(name, slot, owner, lease.toNanos());
        }

        @Override
        String lossReason() {
            return "memory server no longer has this owner on slot " + slot;
        }

        @Override
        public int slot() {
            return slot;
        }

        @Override
        public long fencingToken() {
            return token;
        }

        @Override
        public void release() {
            release(permitsHeld, "a permit of '" + name + "'", () -> server.releasePermit(name, slot, owner));
        }
    }

    /** Reports a loss of every held lock of that name, as a session expiry would. */
    public void signalLoss(String lockName, String reason) {
        held.values().stream().filter(h -> h.name.equals(lockName)).forEach(h -> h.evidence.lost(reason, null));
    }

    public int heldCount() {
        return held.size();
    }

    @Override
    public void close() {
        closed.set(true);
        renewer.shutdownNow();
    }

    private final class Held extends Renewed implements BackendLease {

        Held(String name, long owner, long token, LeaseEvidence evidence) {
            super(name, owner, token, evidence);
        }

        @Override
        boolean renewOnServer() {
            return server.renew(name, owner, lease.toNanos());
        }

        @Override
        String lossReason() {
            return "memory server no longer has this owner";
        }

        @Override
        public long fencingToken() {
            return token;
        }

        @Override
        public boolean releaseAfter(Duration remaining) {
            if (!expiryHandover.get()) {
                return false;
            }
            handovers.incrementAndGet();
            stopRenewing();
            held.remove(key());
            server.expireIn(name, owner, remaining.toNanos());
            return true;
        }

        @Override
        public boolean recordsSlots() {
            return slots.get();
        }

        @Override
        public Optional<Instant> lastCompletedSlot() {
            return Optional.ofNullable(server.slot(name));
        }

        @Override
        public void recordCompletedSlot(Instant slot) {
            if (!server.recordSlot(name, owner, token, slot)) {
                throw new LockLostException(name, "memory server: lock '" + name + "' is no longer held with token " + token);
            }
        }

        @Override
        public void release() {
            release(held, "'" + name + "'", () -> server.release(name, owner));
        }
    }
}
