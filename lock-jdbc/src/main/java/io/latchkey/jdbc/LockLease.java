package io.latchkey.jdbc;

import io.latchkey.LockLostException;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.LeaseEvidence;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A lock's grant: its row of the names table. */
final class LockLease extends RowLease {

    private static final Logger log = LoggerFactory.getLogger(LockLease.class);

    LockLease(JdbcLockBackend backend, String name, String owner, long token, LeaseEvidence evidence) {
        super(backend, 'L', name, owner, token, evidence);
    }

    @Override
    String where() {
        return backend.describe(name);
    }

    @Override
    public boolean releaseAfter(Duration remaining) {
        if (!end()) {
            return true;
        }
        Deadline bound = Deadline.after(backend.db.timeout());
        try {
            boolean held = backend.db.call(name, "handing the expiry of " + where() + " to the database", bound,
                    c -> backend.locks.expireAfter(c, name, owner, Math.max(1, remaining.toMillis())));
            if (!held) {
                log.warn("lock '{}': the row no longer carried this grant when its expiry was handed over", name);
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw backend.db.interrupted(name, "handing the expiry of " + where() + " to the database", e);
        }
    }

    @Override
    public boolean recordsSlots() {
        return true;
    }

    @Override
    public Optional<Instant> lastCompletedSlot() {
        return call("reading the last completed slot of " + where(), c -> backend.locks.lastSlot(c, name));
    }

    @Override
    public void recordCompletedSlot(Instant slot) {
        boolean recorded = call("recording slot " + slot + " of " + where(),
                c -> backend.locks.recordSlot(c, name, owner, token, slot));
        if (!recorded) {
            throw new LockLostException(name, where() + ": the database refused to record slot " + slot
                    + ", this grant (token " + token + ") no longer holds the lock");
        }
    }

    private <T> T call(String what, Database.Work<T> work) {
        try {
            return backend.db.call(name, what, Deadline.after(backend.db.timeout()), work);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw backend.db.interrupted(name, what, e);
        }
    }
}
