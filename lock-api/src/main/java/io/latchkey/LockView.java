package io.latchkey;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * The {@link Lock} view of a {@link DistributedLock}, from {@link DistributedLock#asLock()}, whose
 * javadoc states its rules. The thread's leases are kept per lock handle, so that views of one lock
 * share them.
 *
 * <p>Thread-safe.
 */
final class LockView implements Lock {

    /** The longest wait of one request of {@link #lock()}: it asks again after each. */
    static final Duration LOCK_WAIT = LockOptions.MAX_DURATION;

    /** The calling thread's open leases by lock handle (handles of one name and client are equal), latest last. */
    private static final ThreadLocal<Map<DistributedLock, Deque<Lease>>> HELD = ThreadLocal.withInitial(HashMap::new);

    private final DistributedLock lock;

    LockView(DistributedLock lock) {
        this.lock = lock;
    }

    @Override
    public void lock() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (take(LOCK_WAIT)) {
                        return;
                    }
                } catch (InterruptedException e) {
                    interrupted = true; // lock() is not interruptible: ask again, and say so once granted
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        while (!take(LOCK_WAIT)) {
            // a day passed without a grant: ask again
        }
    }

    @Override
    public boolean tryLock() {
        try {
            return take(Duration.ZERO);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        long nanos = unit.toNanos(time);
        return take(nanos <= 0 ? Duration.ZERO : Duration.ofNanos(Math.min(nanos, LOCK_WAIT.toNanos())));
    }

    private boolean take(Duration wait) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before asking for lock '" + lock.name() + "'");
        }
        return lock.tryLock(wait).map(lease -> HELD.get().computeIfAbsent(lock, l -> new ArrayDeque<>()).add(lease))
                .orElse(false);
    }

    @Override
    public void unlock() {
        Map<DistributedLock, Deque<Lease>> held = HELD.get();
        Deque<Lease> leases = held.get(lock);
        if (leases == null || leases.isEmpty()) {
            throw new IllegalMonitorStateException("lock '" + lock.name() + "' is not held by thread '"
                    + Thread.currentThread().getName() + "' through asLock(): only the thread that locked it may"
                    + " unlock it, once per lock");
        }
        Lease lease = leases.removeLast();
        if (leases.isEmpty()) {
            held.remove(lock);
        }
        boolean valid = lease.isValid();
        lease.close();
        if (!valid) {
            throw new IllegalMonitorStateException("lock '" + lock.name() + "' was released, but its lease had been"
                    + " lost or had expired before unlock(): what ran under it may have overlapped another holder;"
                    + " use DistributedLock with Lease.lost() and the fencing token to learn of a loss in time");
        }
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("lock '" + lock.name() + "' has no conditions through asLock(): a"
                + " condition's wait and signal do not reach other processes; use a lock per state, or the backend's"
                + " own notifications");
    }

    @Override
    public String toString() {
        return "Lock view of " + lock;
    }
}
