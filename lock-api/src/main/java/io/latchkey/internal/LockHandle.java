package io.latchkey.internal;

import io.latchkey.DistributedLock;
import io.latchkey.GrantTime;
import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockCallable;
import io.latchkey.LockListener.Target.Kind;
import io.latchkey.LockRequest;
import io.latchkey.LockResult;
import io.latchkey.LockState;
import io.latchkey.internal.LocalLock.ModeKey;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.GrantRecord;
import io.latchkey.spi.HolderStamp;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The application's handle on one lock name, or on one mode of a read-write lock ({@code kind}
 * {@code READ} or {@code WRITE}); equal to another of the same client, name and kind.
 */
record LockHandle(SharedLockClient client, String name, Kind kind) implements DistributedLock {

    private static final Logger LOG = LoggerFactory.getLogger(LockHandle.class);

    @Override
    public Optional<Lease> tryLock(Duration wait) throws InterruptedException {
        return client.acquire(name, kind, SharedLockClient.deadlineAfter(name, wait), true, null);
    }

    @Override
    public Optional<Lease> tryLock(LockRequest request) throws InterruptedException {
        Objects.requireNonNull(request, "request");
        if (request.slot().isPresent()) {
            throw new IllegalArgumentException("a slot applies to runLocked and callLocked only, not to tryLock of lock '"
                    + name + "': " + request);
        }
        return client.acquire(name, kind, SharedLockClient.deadlineAfter(name, request.waitTime()), true, request);
    }

    @Override
    public <T> LockResult<T> callLocked(LockRequest request, LockCallable<T> task) throws InterruptedException {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(task, "task");
        Optional<Lease> maybe = client.acquire(name, kind, SharedLockClient.deadlineAfter(name, request.waitTime()), true, request);
        if (maybe.isEmpty()) {
            return LockResults.notAcquired();
        }
        SharedLease lease = (SharedLease) maybe.get();
        try {
            return ScheduledRun.runUnder(client, name, lease, request, task);
        } finally {
            lease.close();
        }
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return holdCount() > 0 && validHeld(true);
    }

    @Override
    public int holdCount() {
        Thread me = Thread.currentThread();
        if (kind == Kind.LOCK) {
            return ownHolds(client.localOf(name), me, false);
        }
        LocalLock writers = client.localAt(new ModeKey(name, true, null));
        if (kind == Kind.WRITE) {
            return ownHolds(writers, me, false);
        }
        return ownHolds(client.localAt(new ModeKey(name, false, me)), me, false) + ownHolds(writers, me, true);
    }

    /** The leases of {@code local}'s grant that {@code me} holds: its read leases nested in a write grant if {@code read}. */
    private static int ownHolds(LocalLock local, Thread me, boolean read) {
        if (local == null) {
            return 0;
        }
        synchronized (local) {
            if (local.grant == null || local.owner != me) {
                return 0;
            }
            return read ? local.grant.readHolds : local.grant.holds - local.grant.readHolds;
        }
    }

    @Override
    public boolean isHeldByThisClient() {
        return validHeld(false);
    }

    /** Whether a grant of this handle's kind, of the current thread only if {@code ownThread}, is held and valid. */
    private boolean validHeld(boolean ownThread) {
        Thread me = Thread.currentThread();
        if (kind == Kind.LOCK) {
            return valid(client.localOf(name), me, ownThread, false);
        }
        LocalLock writers = client.localAt(new ModeKey(name, true, null));
        if (kind == Kind.WRITE) {
            return valid(writers, me, ownThread, false);
        }
        if (valid(writers, me, ownThread, true)) {
            return true;
        }
        if (ownThread) {
            return valid(client.localAt(new ModeKey(name, false, me)), me, true, false);
        }
        return client.readersOf(name).stream().anyMatch(l -> valid(l, me, false, false));
    }

    /** Whether {@code local} has a valid grant with a lease of the asked mode in it (a nested read if {@code read}). */
    private static boolean valid(LocalLock local, Thread me, boolean ownThread, boolean read) {
        if (local == null) {
            return false;
        }
        Grant grant;
        synchronized (local) {
            grant = local.grant;
            if (grant == null || ownThread && local.owner != me
                    || (read ? grant.readHolds == 0 : grant.holds == grant.readHolds)) {
                return false;
            }
        }
        return grant.validity.isValid();
    }

    @Override
    public CompletableFuture<Optional<Lease>> tryLockAsync(Duration wait) {
        Deadline deadline = SharedLockClient.deadlineAfter(name, wait);
        client.ensureOpen();
        CompletableFuture<Optional<Lease>> result = new CompletableFuture<>();
        Future<?> task;
        try {
            task = client.workers().submit(() -> {
                try {
                    Optional<Lease> lease = client.acquire(name, kind, deadline, false, null);
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
            throw new IllegalStateException("lock client for " + client.backendName() + " is closed", e);
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
        String what = kind == Kind.LOCK ? "" : kind == Kind.READ ? "read " : "write ";
        return "DistributedLock{" + what + "'" + name + "' on " + client.backendName() + '}';
    }

    @Override
    public LockState inspect() throws InterruptedException {
        client.ensureOpen();
        plainLockOnly("inspected: inspect() reads the holder");
        return state(client.backend().inspect(name).orElse(null));
    }

    @Override
    public LockState forceRelease() throws InterruptedException {
        client.ensureOpen();
        plainLockOnly("force-released: forceRelease() ends the grant");
        LockState ended = state(client.backend().forceRelease(name).orElse(null));
        if (ended.isHeld()) {
            LOG.warn("lock '{}' on {}: force-released the grant of {}{}; the holder learns it as a loss at its next"
                    + " check of the grant, and the next grant's token is higher", name, client.backend().describe(name),
                    ended.holder().orElseThrow(), ended.token().isPresent() ? " (token " + ended.token().getAsLong() + ")" : "");
        }
        return ended;
    }

    private void plainLockOnly(String whatFor) {
        if (kind != Kind.LOCK) {
            throw new UnsupportedOperationException("read-write lock '" + name + "' cannot be " + whatFor
                    + " of a plain lock or an election, and a read-write lock has many; readWriteLock(name).inspect()"
                    + " reads its readers and writer");
        }
    }

    private LockState state(GrantRecord grant) {
        return state(name, grant);
    }

    /** The state of {@code name} held as {@code grant} records it, or free if {@code grant} is null. */
    static LockState state(String name, GrantRecord grant) {
        if (grant == null) {
            return LockState.free(name);
        }
        return LockState.held(name, Holder.parse(grant.holder()).orElse(Holder.UNKNOWN), grant.token(),
                grant.expiresIn(), grant.waiters(), since(grant));
    }

    /** The backend's time of the grant, else the request's time the holder wrote with it, else none. */
    private static GrantTime since(GrantRecord grant) {
        if (grant.since() != null) {
            return grant.since();
        }
        return HolderStamp.requestedAt(grant.holder()).map(at -> new GrantTime(at, GrantTime.Source.HOLDER_AT_REQUEST))
                .orElse(null);
    }
}
