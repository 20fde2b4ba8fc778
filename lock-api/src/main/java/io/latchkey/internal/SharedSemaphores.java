package io.latchkey.internal;

import io.latchkey.DistributedSemaphore;
import io.latchkey.LockException;
import io.latchkey.SemaphoreLease;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.PermitLease;
import io.latchkey.spi.SemaphoreBackend;
import java.util.List;
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
 * lock's grant; a lost permit is released in the background, and the client's close releases every
 * permit still open.
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
        SemaphoreBackend backend = backendFor(name);
        retain(name, permits);
        boolean handedOver = false;
        try {
            Validity validity = new Validity(name, "semaphore '" + name + "'", backend.describeSemaphore(name),
                    client.options().safetyMargin(), client.timer());
            PermitLease permit;
            try {
                permit = backend.acquirePermit(name, permits, deadline, validity);
            } catch (LockException | IllegalArgumentException | IllegalStateException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new LockException(name, "acquiring a permit of semaphore '" + name + "' ("
                        + backend.describeSemaphore(name) + ") failed: " + e, e);
            }
            if (permit == null) {
                return Optional.empty();
            }
            validity.rename("semaphore '" + name + "' permit " + permit.slot());
            PermitGrant grant = new PermitGrant(this, name, permits, permit, validity);
            if (!validity.start(lost -> client.releaseInBackground(grant::releaseBackendQuietly))) {
                grant.releaseBackendQuietly();
                throw new LockException(name, "a permit of semaphore '" + name + "' (" + backend.describeSemaphore(name)
                        + ") was granted, but its validity ended before the grant returned: " + validity.describeState()
                        + "; the lease is shorter than an acquire takes, raise the lease option");
            }
            open.add(grant);
            handedOver = true;
            if (client.isClosed()) {
                grant.close();
                throw new IllegalStateException("lock client for " + client.backendName() + " was closed while a permit"
                        + " of semaphore '" + name + "' was being acquired; the permit was released");
            }
            return Optional.of(grant);
        } finally {
            if (!handedOver) {
                unretain(name);
            }
        }
    }

    /** Called once by a permit that closed. */
    void closed(PermitGrant grant) {
        open.remove(grant);
        unretain(grant.name);
    }

    void releaseInBackground(Runnable release) {
        client.releaseInBackground(release);
    }

    String describe(String name) {
        return ((SemaphoreBackend) client.backend()).describeSemaphore(name);
    }

    /** Releases every permit still open; for the client's close. */
    void closeAll() {
        for (PermitGrant grant : List.copyOf(open)) {
            try {
                grant.close();
            } catch (RuntimeException e) {
                log.warn("closing client: release of {} ({}) failed; it expires on its own within {}",
                        grant.subject(), describe(grant.name), client.options().lease(), e);
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
