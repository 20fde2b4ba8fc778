package io.latchkey.jdbc;

import io.latchkey.spi.Deadline;
import io.latchkey.spi.GrantRecord;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock's waiter as other clients count it ({@link GrantRecord#waiters()}): a row of kind {@code Q} in
 * the holders table while it waits, expiring a lease after its last refresh (each try refreshes it
 * when a third of the lease has passed), deleted when the waiter is granted or gives up. Waiting costs
 * the database one statement per refresh; an acquire that does not wait writes none.
 */
final class QueuedWaiter {

    private static final Logger log = LoggerFactory.getLogger(QueuedWaiter.class);

    private final JdbcLockBackend backend;
    private final String name;
    private final String owner;
    private final long slot = ThreadLocalRandom.current().nextLong(Long.MAX_VALUE);
    private long refreshedAt;
    private boolean inserted;

    QueuedWaiter(JdbcLockBackend backend, String name, String owner) {
        this.backend = backend;
        this.name = name;
        this.owner = owner;
    }

    void refresh(Deadline bound) throws InterruptedException {
        long now = System.nanoTime();
        if (inserted && now - refreshedAt < TimeUnit.MILLISECONDS.toNanos(backend.leaseMillis / 3)) {
            return;
        }
        backend.db.call(name, "counting a waiter of " + backend.describe(name), bound, c -> {
            backend.holders.queue(c, name, slot, owner, backend.leaseMillis, !inserted);
            return null;
        });
        inserted = true;
        refreshedAt = now;
    }

    void leave() {
        if (!inserted) {
            return;
        }
        inserted = false;
        try {
            backend.db.call(name, "removing a waiter of " + backend.describe(name), Deadline.after(backend.db.timeout()), c -> {
                backend.holders.release(c, 'Q', name, owner, null);
                return null;
            });
        } catch (RuntimeException e) {
            log.debug("lock '{}': a waiter's row stays until it expires", name, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
