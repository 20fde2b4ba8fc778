package io.latchkey.jdbc;

import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.PermitLease;

/** A permit of a semaphore: its row of the holders table, at its slot. */
final class SlotLease extends RowLease implements PermitLease {
    private final int slot;

    SlotLease(JdbcLockBackend backend, String name, String owner, long token, int slot, LeaseEvidence evidence) {
        super(backend, 'S', name, owner, token, evidence);
        this.slot = slot;
    }

    @Override
    public int slot() {
        return slot;
    }

    @Override
    String where() {
        return "slot " + slot + " of " + backend.describeSemaphore(name);
    }
}
