package io.latchkey.internal;

import io.latchkey.DistributedSemaphore;
import io.latchkey.LockListener.Target;
import io.latchkey.LockState;
import io.latchkey.SemaphoreLease;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.GrantRecord;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.PermitLease;
import io.latchkey.spi.SemaphoreBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The semaphores of one {@link SharedLockClient}: the permits it holds, and the number of permits of
 * every name it uses.
 *
 * <p>Unlike locks there is no reentrancy and no local gate: every acquire goes to the backend for a
 * permit of its own, and the backend keeps the count. The client remembers a name's number of permits
 * while it has a handle acquiring or a lease open on it (reference-counted, so that names used once
 * leave nothing behind), and refuses another number for that name at once. Each permit is one
 * {@link PermitGrant}, with its own {@link Validity} driven by the backend's evidence exactly as a
 * lock's grant and taken through the same {@link AcquirePath}, so that listeners hear of permits as of
 * locks; a lost permit is released in the background, and the client's close releases every permit
 * still open.
 */
final class SharedSemaphores {

    /** The most permits a semaphore may have: enough for any job limit, few enough for a Kafka topic's partitions. */
    static final int MAX_PERMITS = 1000;

    private static final Logger log = LoggerFactory.getLogger(SharedSemaphores.class);

    private final SharedLockClient client;
    private final ConcurrentHashMap<String, Known> known = new ConcurrentHashMap<>();
    private final Set<PermitGrant> open = ConcurrentHashMap.newKeySet();

    /** A name in use by this client, with its number of permits. */
    private static final class Known {
        final int permits;
        int refs; // guarded by the map's compute

        Known(int permits) {
            this.permits = permits;
        }
    }

    SharedSemaphores(SharedLockClient client) {
        this.client = client;
    }

    DistributedSemaphore semaphore(String name, int permits) {
        client.ensureOpen();
        checkSemaphore(name, permits);
        backendFor(name);
        Known k = known.get(name);
        if (k != null && k.permits != permits) {
            throw mismatch(name, k.permits, permits);
        }
        return new SemaphoreHandle(this, name, permits);
    }

    static void checkSemaphore(String name, int permits) {
        LockNames.validate(name);
        if (permits < 1 || permits > MAX_PERMITS) {
            throw new IllegalArgumentException("semaphore '" + LockNames.printable(name) + "' must have 1 to "
                    + MAX_PERMITS + " permits, got " + permits);
        }
    }

    private SemaphoreBackend backendFor(String name) {
        LockBackend backend = client.backend();
        if (backend instanceof SemaphoreBackend semaphores) {
            return semaphores;
        }
        throw new UnsupportedOperationException("the " + client.backendName() + " backend (" + backend.getClass().getName()
                + ") does not offer semaphores yet, so semaphore '" + LockNames.printable(name) + "' cannot be used on it;"
                + " use a lock, or a backend whose documentation lists semaphores");
    }

    static IllegalArgumentException mismatch(String name, int known, int asked) {
        return new IllegalArgumentException("semaphore '" + LockNames.printable(name) + "' is in use with " + known
                + " permits, and this call asked for " + asked + ": every holder of a semaphore must use the same number"
                + " of permits");
    }

    Optional<SemaphoreLease> acquire(String name, int permits, Deadline deadline) throws InterruptedException {
        client.ensureOpen();
        long callStart = System.nanoTime();
        SemaphoreBackend backend = backendFor(name);
        retain(name, permits);
        PermitAttempt attempt = new PermitAttempt(backend, name, permits);
        try {
            Validity validity = new Validity(name, "semaphore '" + name + "'", () -> backend.describeSemaphore(name),
                    client.options().safetyMargin(), client.deadlines());
            return Optional.ofNullable(client.acquirePath().acquire(attempt, deadline, validity, callStart));
        } finally {
            if (!attempt.handedOver) {
                unretain(name);
            }
        }
    }

    /** Each slot's state, from the backend's records of the held ones ({@link SemaphoreBackend#inspectPermits}). */
    List<LockState> inspect(String name, int permits) throws InterruptedException {
        client.ensureOpen();
        Map<Integer, GrantRecord> held = backendFor(name).inspectPermits(name, permits);
        List<LockState> slots = new ArrayList<>(permits);
        for (int slot = 0; slot < permits; slot++) {
            GrantRecord g = held.get(slot);
            // waiters wait for any slot: none is told per slot
            slots.add(g == null ? LockState.free(name) : LockHandle.state(name, new GrantRecord(g.holder(), g.token(),
                    g.expiresIn(), -1, g.since())));
        }
        return List.copyOf(slots);
    }

    /** One call's permit, for {@link AcquirePath}: the semaphore's count is retained until the permit closes. */
    private final class PermitAttempt implements GrantKind<PermitLease, PermitGrant> {
        private final SemaphoreBackend backend;
        private final Target target;
        boolean handedOver;

        PermitAttempt(SemaphoreBackend backend, String name, int permits) {
            this.backend = backend;
            this.target = Target.permit(name, permits);
        }

        @Override
        public Target target() {
            return target;
        }

        @Override
        public PermitLease acquire(Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
            return backend.acquirePermit(target.name(), target.permits(), deadline, evidence);
        }

        @Override
        public PermitGrant grant(PermitLease permit, Validity validity) {
            validity.rename("semaphore '" + target.name() + "' permit " + permit.slot());
            return new PermitGrant(client, SharedSemaphores.this, target.withSlot(permit.slot()), permit, validity);
        }

        @Override
        public void handOver(PermitGrant grant) {
            open.add(grant);
            handedOver = true;
        }
    }

    /** Called once by a permit that closed. */
    void closed(PermitGrant grant) {
        open.remove(grant);
        unretain(grant.target.name());
    }

    /** Releases every permit still open; for the client's close. */
    void closeAll() {
        for (PermitGrant grant : List.copyOf(open)) {
            try {
                grant.close();
            } catch (RuntimeException e) {
                log.warn("closing client: release of {} ({}) failed; it expires on its own within {}",
                        grant.target, client.describe(grant.target), client.options().lease(), e);
            }
        }
    }

    /** How many names this client currently tracks; for tests of rule 10. */
    int trackedNames() {
        return known.size();
    }

    private void retain(String name, int permits) {
        known.compute(name, (n, k) -> {
            Known entry = k == null ? new Known(permits) : k;
            if (entry.permits != permits) {
                throw mismatch(name, entry.permits, permits);
            }
            entry.refs++;
            return entry;
        });
    }

    private void unretain(String name) {
        known.computeIfPresent(name, (n, k) -> --k.refs > 0 ? k : null);
    }
}
