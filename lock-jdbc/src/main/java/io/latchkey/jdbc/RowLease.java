package io.latchkey.jdbc;

import io.latchkey.spi.BackendLease;
import io.latchkey.spi.LeaseEvidence;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A grant held as a row: a lock's row of {@code <namespace>_names}, or a permit's, reader's or writer's
 * row of {@code <namespace>_holders}. The {@link Renewer} renews it while it is held and reports each
 * answer to its evidence; {@link #release()} deletes or frees the row only where it still carries this
 * grant's owner.
 */
abstract class RowLease implements BackendLease {

    final JdbcLockBackend backend;
    /** {@code L} lock; {@code S} permit, {@code R} reader, {@code W} writer (rows of the holders table). */
    final char kind;
    final String name;
    /** The grant's own id, written in the row's {@code owner}: nothing but this grant matches it. */
    final String owner;
    final long token;
    final LeaseEvidence evidence;
    private final AtomicBoolean ended = new AtomicBoolean();
    /** The send time of the last statement that confirmed the grant: the {@link Renewer} renews the stalest first. */
    private volatile long confirmedAt;

    RowLease(JdbcLockBackend backend, char kind, String name, String owner, long token, LeaseEvidence evidence) {
        this.backend = backend;
        this.kind = kind;
        this.name = name;
        this.owner = owner;
        this.token = token;
        this.evidence = evidence;
    }

    @Override
    public long fencingToken() {
        return token;
    }

    /** Confirms the grant from a statement sent at {@code sentAt} that wrote the row for {@code leaseMillis}. */
    void confirmed(long sentAt, long leaseMillis) {
        confirmedAt = sentAt;
        evidence.confirmed(sentAt, Duration.ofMillis(leaseMillis));
    }

    long confirmedAt() {
        return confirmedAt;
    }

    /** The key its waiters wait under: a semaphore's, or a read-write lock's, for its holder rows. */
    String wakeKey() {
        return Wakeups.key(kind == 'L' ? 'L' : kind == 'S' ? 'S' : 'W', name);
    }

    /** Where the grant lives, for messages. */
    abstract String where();

    /** Stops renewal; true the first time only. */
    boolean end() {
        if (!ended.compareAndSet(false, true)) {
            return false;
        }
        backend.renewer.remove(this);
        return true;
    }

    @Override
    public void release() {
        if (end()) {
            backend.releaseRow(this);
        }
    }
}
