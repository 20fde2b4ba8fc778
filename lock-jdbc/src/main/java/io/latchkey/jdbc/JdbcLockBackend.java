package io.latchkey.jdbc;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockOptions;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.GrantRecord;
import io.latchkey.spi.HolderStamp;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.Pauses;
import io.latchkey.spi.PermitLease;
import io.latchkey.spi.ReadWriteBackend;
import io.latchkey.spi.ReadWriteRecords;
import io.latchkey.spi.SemaphoreBackend;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Locks, semaphores and read-write locks as lease rows of a relational database, expired on the
 * database's clock: see {@link LockRows} for a lock's one-statement grant and {@link HolderRows} for the
 * transactions of semaphores and read-write locks, {@link Renewer} for renewals and the evidence, and
 * {@link Wakeups} for how waiters wait.
 *
 * <p>Waiting: a waiter tries, and when the name is taken sleeps until a release wakes it (a release of
 * this client; on PostgreSQL also any client's, through {@code LISTEN}/{@code NOTIFY}), until the
 * holder's row expires on the database's clock (the attempt reads how long it has left), or until
 * {@code pollInterval} passed, whichever comes first, then tries again. So a crashed holder is
 * replaced as soon as its row expires, and a release of another client is seen within
 * {@code pollInterval} where no notification carries it (MariaDB and MySQL, or a notification lost to
 * a reconnect of the listening connection).
 *
 * <p>Thread-safe.
 */
final class JdbcLockBackend implements SemaphoreBackend, ReadWriteBackend {

    private static final Logger log = LoggerFactory.getLogger(JdbcLockBackend.class);

    final Database db;
    final Tables tables;
    final Renewer renewer;
    final LockRows locks;
    final HolderRows holders;
    private final Wakeups wakeups = new Wakeups();
    private final PostgresListener listener;
    private final LockOptions options;
    private final HolderStamp stamp;
    final long leaseMillis;
    private final long pollMillis;
    private final String clientId = Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
    private final AtomicLong grants = new AtomicLong();
    private final ExecutorService threads;
    private final AutoCloseable pool;

    JdbcLockBackend(Database db, javax.sql.DataSource listenOn, LockOptions options, Duration pollInterval,
            java.util.concurrent.ThreadFactory renewThreads, java.util.concurrent.ThreadFactory listenThreads,
            ExecutorService threads, AutoCloseable pool) {
        this.db = db;
        this.tables = db.tables;
        this.options = options;
        this.stamp = new HolderStamp(options);
        this.leaseMillis = options.lease().toMillis();
        this.pollMillis = pollInterval.toMillis();
        this.locks = new LockRows(tables, db.dialect);
        this.holders = new HolderRows(tables, db.dialect);
        this.threads = threads;
        this.pool = pool;
        this.renewer = new Renewer(this, options.lease(), renewThreads);
        this.listener = db.dialect.notifies()
                ? new PostgresListener(listenOn, tables.channel(), wakeups, pollInterval, listenThreads) : null;
    }

    private String newOwner() {
        return clientId + "-" + grants.incrementAndGet();
    }

    @Override
    public String describe(String lockName) {
        return db.dialect + " row ('L', '" + lockName + "') of table " + tables.names() + " in " + db.where;
    }

    @Override
    public String describeSemaphore(String name) {
        return db.dialect + " rows ('S', '" + name + "') of tables " + tables.names() + " and " + tables.holders() + " in "
                + db.where;
    }

    @Override
    public String describeReadWrite(String name) {
        return db.dialect + " rows ('W', '" + name + "') of tables " + tables.names() + " and " + tables.holders() + " in "
                + db.where;
    }

    /** One try of a waiting acquire: the lease, or null and how long the holder has left (0 if unknown). */
    private interface Try<L> {
        Outcome<L> once(Deadline bound) throws InterruptedException;
    }

    private record Outcome<L>(L lease, long holderLeftMillis) {
    }

    /**
     * Tries until granted or {@code deadline}, sleeping between tries as the class javadoc says. A
     * database that does not answer is retried while the caller's wait lasts; an interrupt ends the
     * wait with nothing left held ({@code abandon} undoes a grant the interrupted try got).
     */
    private <L extends RowLease> L await(String key, String lockName, String where, Deadline deadline, Try<L> attempt,
            Runnable gaveUp) throws InterruptedException {
        Wakeups.Signal signal = wakeups.join(key);
        Pauses pauses = Pauses.until(deadline.callBound(db.timeout()));
        try {
            while (true) {
                long seen = signal.generation();
                Outcome<L> outcome;
                try {
                    outcome = attempt.once(deadline.callBound(db.timeout()));
                } catch (LockBackendUnavailableException e) {
                    if (deadline.hasPassed()) {
                        gaveUp.run();
                        throw pauses.explain(e, lockName, where + ": ", "waiting for " + lockName, db.dialect.toString());
                    }
                    long nap = Math.min(pollMillis, deadline.remainingMillis()) + 1;
                    Thread.sleep(nap); // the database may be restarting: again while the caller's wait lasts
                    pauses.woke(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(nap));
                    continue;
                }
                if (outcome.lease() != null) {
                    if (Thread.interrupted()) { // interrupted while the statement ran: hand the grant back
                        releaseRow(outcome.lease());
                        throw new InterruptedException("interrupted while acquiring " + where);
                    }
                    return outcome.lease();
                }
                if (deadline.hasPassed()) {
                    gaveUp.run();
                    return null;
                }
                long left = outcome.holderLeftMillis() > 0 ? outcome.holderLeftMillis() + 1 : pollMillis;
                try {
                    signal.await(seen, Math.min(Math.min(left, pollMillis), deadline.remainingMillis() + 1));
                } catch (InterruptedException e) {
                    gaveUp.run();
                    throw e;
                }
            }
        } finally {
            wakeups.leave(key, signal);
        }
    }

    @Override
    public BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        String holder = stamp.forCurrentThread();
        String where = describe(lockName);
        String owner = newOwner(); // one per acquire: an attempt that runs again finds its own grant
        QueuedWaiter queued = new QueuedWaiter(this, lockName, owner);
        return await(Wakeups.key('L', lockName), lockName, where, deadline, bound -> {
            long sentAt = System.nanoTime();
            LockRows.Attempt a = db.call(lockName, "the acquire of " + where, bound,
                    c -> locks.grant(c, lockName, owner, leaseMillis, holder));
            if (!a.granted()) {
                queued.refresh(bound);
                return new Outcome<>(null, a.holderLeftMillis());
            }
            queued.leave();
            return new Outcome<>(granted(new LockLease(this, lockName, owner, a.token(), evidence), sentAt), 0);
        }, queued::leave);
    }

    private <L extends RowLease> L granted(L lease, long sentAt) {
        lease.confirmed(sentAt, leaseMillis);
        renewer.add(lease);
        return lease;
    }

    @Override
    public PermitLease acquirePermit(String name, int permits, Deadline deadline, LeaseEvidence evidence)
            throws InterruptedException {
        String holder = stamp.forCurrentThread();
        String where = describeSemaphore(name);
        try {
            return acquirePermit(name, permits, deadline, evidence, holder, where);
        } catch (MismatchException e) {
            throw mismatch(name, e.known, permits);
        }
    }

    private PermitLease acquirePermit(String name, int permits, Deadline deadline, LeaseEvidence evidence, String holder,
            String where) throws InterruptedException {
        String owner = newOwner(); // one per acquire: an attempt that runs again finds its own grant
        return await(Wakeups.key('S', name), name, where, deadline, bound -> {
            long sentAt = System.nanoTime();
            PermitRow granted = db.transaction(name, "the acquire of a permit of " + where, bound, c -> {
                HolderRows.NameRow row = holders.lockName(c, 'S', name, permits);
                holders.dropExpired(c, "'S'", name);
                List<HolderRows.Held> held = holders.held(c, "'S'", name);
                for (HolderRows.Held h : held) {
                    if (h.owner().equals(owner)) { // an earlier attempt committed before its connection failed
                        return new PermitRow((int) h.slot(), h.token(), 0);
                    }
                }
                if (row.permits() == null || row.permits() != permits) {
                    if (!held.isEmpty()) {
                        throw new MismatchException(row.permits());
                    }
                    holders.setPermits(c, name, permits);
                }
                int slot = 0;
                for (HolderRows.Held h : held) { // ordered by slot: the first gap is the lowest free slot
                    if (h.slot() == slot) {
                        slot++;
                    }
                }
                if (slot >= permits) {
                    long soonest = held.stream().mapToLong(HolderRows.Held::leftMillis).min().orElse(0);
                    return new PermitRow(-1, 0, soonest);
                }
                return new PermitRow(slot, holders.insert(c, 'S', 'S', name, slot, owner, leaseMillis, holder, row.token()), 0);
            });
            if (granted.slot() < 0) {
                return new Outcome<>(null, granted.holderLeftMillis());
            }
            return new Outcome<>(granted(new SlotLease(this, name, owner, granted.token(), granted.slot(), evidence), sentAt), 0);
        }, () -> { });
    }

    private record PermitRow(int slot, long token, long holderLeftMillis) {
    }

    /** A semaphore known with another number of permits, thrown out of its transaction. */
    private static final class MismatchException extends RuntimeException {
        final Integer known;

        MismatchException(Integer known) {
            super(null, null, false, false);
            this.known = known;
        }
    }

    @Override
    public BackendLease acquireRead(String name, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        return acquireReadWrite(name, 'R', deadline, evidence);
    }

    @Override
    public BackendLease acquireWrite(String name, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        return acquireReadWrite(name, 'W', deadline, evidence);
    }

    /**
     * A reader is granted while no writer holds and none waits; a writer while nobody holds, and while
     * it waits it marks itself the waiting writer of the name (for a lease, renewed by every try), so
     * that readers that come later wait behind it. A writer that gives up clears the mark.
     */
    private BackendLease acquireReadWrite(String name, char mode, Deadline deadline, LeaseEvidence evidence)
            throws InterruptedException {
        String holder = stamp.forCurrentThread();
        String where = describeReadWrite(name);
        String waiter = newOwner(); // a writer's mark while it waits
        String what = (mode == 'R' ? "the acquire of a read grant of " : "the acquire of the write grant of ") + where;
        Runnable gaveUp = mode == 'R' ? () -> { } : () -> clearWaitingWriter(name, waiter);
        String owner = newOwner(); // one per acquire: an attempt that runs again finds its own grant
        return await(Wakeups.key('W', name), name, where, deadline, bound -> {
            long sentAt = System.nanoTime();
            long[] granted = db.transaction(name, what, bound, c -> {
                HolderRows.NameRow row = holders.lockName(c, 'W', name, null);
                holders.dropExpired(c, "'R', 'W'", name);
                List<HolderRows.Held> held = holders.held(c, "'R', 'W'", name);
                for (HolderRows.Held h : held) {
                    if (h.owner().equals(owner)) { // an earlier attempt committed before its connection failed
                        return new long[] {h.token(), 0};
                    }
                }
                boolean otherWriterWaits = row.waitingWriter() != null && row.waitingLeftMillis() > 0
                        && !row.waitingWriter().equals(waiter);
                long soonest = held.stream().mapToLong(HolderRows.Held::leftMillis).min().orElse(0);
                if (mode == 'R') {
                    if (otherWriterWaits || held.stream().anyMatch(h -> h.kind() == 'W')) {
                        return new long[] {0, otherWriterWaits ? 0 : soonest};
                    }
                } else if (!held.isEmpty() || otherWriterWaits) {
                    if (!otherWriterWaits) {
                        holders.setWaitingWriter(c, name, waiter, leaseMillis);
                    }
                    return new long[] {0, otherWriterWaits ? 0 : soonest};
                } else if (waiter.equals(row.waitingWriter())) {
                    holders.setWaitingWriter(c, name, null, 0);
                }
                return new long[] {holders.insert(c, 'W', mode, name, -1, owner, leaseMillis, holder, row.token()), 0};
            });
            if (granted[0] == 0) {
                return new Outcome<>(null, granted[1]);
            }
            return new Outcome<>(granted(new ModeLease(this, mode, name, owner, granted[0], evidence), sentAt), 0);
        }, gaveUp);
    }

    private void clearWaitingWriter(String name, String waiter) {
        try {
            db.call(name, "clearing the waiting writer of " + describeReadWrite(name), Deadline.after(db.timeout()),
                    c -> {
                        holders.clearWaitingWriter(c, name, waiter);
                        return null;
                    });
        } catch (RuntimeException e) {
            log.debug("read-write lock '{}': the waiting writer's mark stays until it expires", name, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }


    /** Releases a row of this client: frees or deletes it where it still carries the grant's owner, and wakes waiters. */
    void releaseRow(RowLease lease) {
        renewer.remove(lease);
        try {
            db.call(lease.name, "the release of " + lease.where(), Deadline.after(db.timeout()), c -> {
                if (lease.kind == 'L') {
                    locks.release(c, lease.name, lease.owner);
                } else {
                    holders.release(c, lease.kind, lease.name, lease.owner, lease.wakeKey());
                }
                return null;
            });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw db.interrupted(lease.name, "the release of " + lease.where(), e);
        } finally {
            wakeups.wake(lease.wakeKey());
        }
    }

    @Override
    public Optional<GrantRecord> inspect(String lockName) throws InterruptedException {
        return db.call(lockName, "reading the holder of " + describe(lockName), Deadline.after(db.timeout()),
                c -> withWaiters(c, lockName, locks.inspect(c, lockName, false)));
    }

    /** {@code grant} with the waiters counted now. */
    private Optional<GrantRecord> withWaiters(java.sql.Connection c, String lockName, Optional<GrantRecord> grant)
            throws java.sql.SQLException {
        if (grant.isEmpty()) {
            return grant;
        }
        GrantRecord g = grant.get();
        return Optional.of(new GrantRecord(g.holder(), g.token(), g.expiresIn(), holders.waiters(c, lockName), g.since()));
    }

    @Override
    public Optional<GrantRecord> forceRelease(String lockName) throws InterruptedException {
        Optional<GrantRecord> ended = db.transaction(lockName, "the force release of " + describe(lockName),
                Deadline.after(db.timeout()), c -> withWaiters(c, lockName, locks.force(c, lockName)));
        wakeups.wake(Wakeups.key('L', lockName));
        return ended;
    }

    @Override
    public List<String> list(String prefix, String after, int limit) throws InterruptedException {
        return db.call(null, "listing the held locks in table " + tables.names(), Deadline.after(db.timeout()),
                c -> locks.list(c, prefix, after, limit));
    }

    @Override
    public Map<Integer, GrantRecord> inspectPermits(String name, int permits) throws InterruptedException {
        String where = describeSemaphore(name);
        try {
            return db.call(name, "reading the permits of " + where, Deadline.after(db.timeout()), c -> {
                List<HolderRows.Held> held = holders.held(c, "'S'", name);
                Integer known = held.isEmpty() ? null : holders.permits(c, name);
                if (known != null && known != permits) {
                    throw new MismatchException(known);
                }
                return holders.slots(held, permits);
            });
        } catch (MismatchException e) {
            throw mismatch(name, e.known, permits);
        }
    }

    @Override
    public ReadWriteRecords inspectReadWrite(String name) throws InterruptedException {
        return db.call(name, "reading the holders of " + describeReadWrite(name), Deadline.after(db.timeout()), c -> {
            List<HolderRows.Held> held = holders.held(c, "'R', 'W'", name);
            GrantRecord writer = held.stream().filter(h -> h.kind() == 'W').findFirst().map(HolderRows.Held::record)
                    .orElse(null);
            return new ReadWriteRecords(held.stream().filter(h -> h.kind() == 'R').map(HolderRows.Held::record).toList(),
                    writer);
        });
    }

    private IllegalArgumentException mismatch(String name, Integer known, int asked) {
        return new IllegalArgumentException("semaphore '" + name + "' (" + describeSemaphore(name) + ") has " + known
                + " permits in the database, and this call asked for " + asked + ": every holder of a semaphore must use"
                + " the same number of permits");
    }

    @Override
    public void close() {
        if (listener != null) {
            listener.stopping(); // it ends within its poll while the renewer stops
        }
        renewer.close();
        if (listener != null) {
            listener.close();
        }
        Database.closeQuietly(pool);
        threads.shutdownNow();
    }
}
