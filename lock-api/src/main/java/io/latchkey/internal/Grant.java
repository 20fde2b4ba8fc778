package io.latchkey.internal;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.spi.BackendLease;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/** One grant of the backend lock, shared by its nested leases. */
final class Grant extends BackendGrant {
    final LocalLock local;
    final AtomicBoolean finished = new AtomicBoolean();
    long atLeastUntil; // set before the grant is shared
    boolean hasAtLeast; // set before the grant is shared
    volatile boolean skipAtLeast;
    volatile boolean lingering;
    volatile ScheduledFuture<?> lingerEnd;
    int holds; // guarded by local; every lease, the reads nested in a write grant among them
    int readHolds; // guarded by local; the read leases nested in this write grant
    boolean ended; // guarded by local

    Grant(SharedLockClient client, LocalLock local, BackendLease backendLease, Validity validity) {
        super(client, local.target, backendLease, validity);
        this.local = local;
    }

    @Override
    void abandon() {
        end();
    }

    /**
     * Called holding the local lock, by the owning thread: a lease nested in this grant; {@code read}
     * for a read lease nested in a write grant.
     */
    SharedLease nest(boolean read) {
        validity.ensureValidForNesting();
        holds++;
        if (read) {
            readHolds++;
        }
        return new SharedLease(this, false, read);
    }

    void leaseClosed(boolean read) {
        boolean last;
        synchronized (local) {
            if (read && !ended) {
                readHolds--;
            }
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
        // asked before close(), which ends validity too: a lease whose deadline passed is lost, even if the
        // timer that says so has not run yet (a process that was paused runs this first)
        boolean lost = validity.loss() != null;
        validity.close();
        long endedAt = System.nanoTime();
        reportReleased(endedAt);
        long linger = atLeastUntil - endedAt;
        if (hasAtLeast && !skipAtLeast && linger > 0 && handOverOrLinger(linger, clientClosing)) {
            return;
        }
        try {
            releaseBackend(lost);
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
            if (e instanceof LockBackendUnavailableException unavailable) {
                client.events().backendUnavailable(target, unavailable);
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
            lingerEnd = client.timer().schedule(() -> client.releaseInBackground(this::finishLinger), lingerNanos, TimeUnit.NANOSECONDS);
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
            client.grantFinished(this);
        }
    }

    boolean ended() {
        synchronized (local) {
            return ended;
        }
    }
}
