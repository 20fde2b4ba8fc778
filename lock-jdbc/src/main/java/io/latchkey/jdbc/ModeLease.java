package io.latchkey.jdbc;

import io.latchkey.spi.LeaseEvidence;

/** A read or write grant: its row of the holders table. */
final class ModeLease extends RowLease {
    ModeLease(JdbcLockBackend backend, char mode, String name, String owner, long token, LeaseEvidence evidence) {
        super(backend, mode, name, owner, token, evidence);
    }

    @Override
    String where() {
        return (kind == 'R' ? "a read grant of " : "the write grant of ") + backend.describeReadWrite(name);
    }
}
