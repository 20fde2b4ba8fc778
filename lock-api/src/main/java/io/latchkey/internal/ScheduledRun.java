package io.latchkey.internal;

import io.latchkey.LockCallable;
import io.latchkey.LockException;
import io.latchkey.LockListener;
import io.latchkey.LockLostException;
import io.latchkey.LockRequest;
import io.latchkey.LockResult;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A task run under a lease for {@code runLocked}/{@code callLocked}: the slot read and skipped or
 * recorded, the task's thread interrupted on loss, the result. Stateless; called on the caller's thread.
 */
final class ScheduledRun {

    private static final Logger log = LoggerFactory.getLogger(SharedLockClient.class);

    private ScheduledRun() {
    }

        static <T> LockResult<T> runUnder(SharedLockClient client, String name, SharedLease lease, LockRequest request,
                LockCallable<T> task) {
            Grant grant = lease.grant;
            Instant slot = request.slot().orElse(null);
            if (slot != null) {
                Optional<Instant> recorded = readSlot(client, name, grant);
                if (!lease.isValid()) {
                    return LockResults.lost(grant.token, lossOf(client, name, grant), false, null, null);
                }
                if (recorded.isPresent() && !slot.isAfter(recorded.get())) {
                    if (lease.fresh) {
                        grant.skipAtLeast = true; // nothing ran: no reason to keep others out
                    }
                    Instant last = recorded.get();
                    client.events().emit(LockListener.Target.lock(name), l -> l.slotSkipped(name, slot, last));
                    log.debug("lock '{}' ({}): slot {} skipped, the backend records {} as completed", name,
                            client.backend().describe(name), slot, last);
                    return LockResults.slotDone(grant.token, last);
                }
            }
            if (!lease.isValid()) {
                return LockResults.lost(grant.token, lossOf(client, name, grant), false, null, null);
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
                return LockResults.lost(grant.token, lossOf(client, name, grant), true, value, failure);
            }
            if (slot != null && (failure == null || request.markSlotOnFailure())) {
                try {
                    grant.backendLease.recordCompletedSlot(slot);
                } catch (LockLostException e) {
                    grant.validity.lost("the backend refused to record slot " + slot + ": " + e.getMessage(), e);
                    return LockResults.lost(grant.token, e, true, value, failure);
                }
            }
            return failure == null ? LockResults.ran(grant.token, value) : LockResults.failed(grant.token, failure);
        }

        private static Optional<Instant> readSlot(SharedLockClient client, String name, Grant grant) {
            if (grant.target.kind() != LockListener.Target.Kind.LOCK) {
                throw new LockException(name, grant.target + " (" + client.describe(grant.target) + "): schedule slots"
                        + " are recorded with a lock, not with a read-write lock; run without a slot, or under the lock");
            }
            if (!grant.backendLease.recordsSlots()) {
                throw new LockException(name, "lock '" + name + "' (" + client.backend().describe(name) + "): the " + client.backendName()
                        + " backend does not record schedule slots; run without a slot, or use a backend that records them");
            }
            try {
                return grant.backendLease.lastCompletedSlot();
            } catch (LockException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new LockException(name, "reading the last completed slot of lock '" + name + "' ("
                        + client.backend().describe(name) + ") failed: " + e, e);
            }
        }

        private static LockLostException lossOf(SharedLockClient client, String name, Grant grant) {
            LockLostException loss = grant.validity.loss();
            return loss != null ? loss : new LockLostException(name, "lock '" + name + "' (" + client.backend().describe(name)
                    + ") is not valid");
        }


    /**
     * The thread of a task run under a lease, interrupted if the lease is lost while the task runs.
     * The interrupt happens under this object's lock and only while the task runs, so that
     * {@link #finish} can clear exactly the interrupt it caused.
     */
    static final class TaskRun {
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
