package io.latchkey.internal;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockCallable;
import io.latchkey.LockRequest;
import io.latchkey.LockResult;
import io.latchkey.spi.Deadline;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;

/** The application's handle on one lock name; equal to another of the same client and name. */
record LockHandle(SharedLockClient client, String name) implements DistributedLock {

    @Override
    public Optional<Lease> tryLock(Duration wait) throws InterruptedException {
        return client.acquire(name, SharedLockClient.deadlineAfter(name, wait), true, null);
    }

    @Override
    public Optional<Lease> tryLock(LockRequest request) throws InterruptedException {
        Objects.requireNonNull(request, "request");
        if (request.slot().isPresent()) {
            throw new IllegalArgumentException("a slot applies to runLocked and callLocked only, not to tryLock of lock '"
                    + name + "': " + request);
        }
        return client.acquire(name, SharedLockClient.deadlineAfter(name, request.waitTime()), true, request);
    }

    @Override
    public <T> LockResult<T> callLocked(LockRequest request, LockCallable<T> task) throws InterruptedException {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(task, "task");
        Optional<Lease> maybe = client.acquire(name, SharedLockClient.deadlineAfter(name, request.waitTime()), true, request);
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
        Grant grant = grantOf(true);
        return grant != null && grant.validity.isValid();
    }

    @Override
    public int holdCount() {
        LocalLock local = client.localOf(name);
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
        LocalLock local = client.localOf(name);
        if (local == null) {
            return null;
        }
        synchronized (local) {
            return !ownedByCurrentThread || local.owner == Thread.currentThread() ? local.grant : null;
        }
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
                    Optional<Lease> lease = client.acquire(name, deadline, false, null);
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
        return "DistributedLock{'" + name + "' on " + client.backendName() + '}';
    }
}
