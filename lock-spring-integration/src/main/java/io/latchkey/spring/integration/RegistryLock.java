package io.latchkey.spring.integration;

import io.latchkey.Lease;
import io.latchkey.LockOptions;
import io.latchkey.LockRequest;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * The lock {@link LatchkeyLockRegistry#obtain} returns for one name: a stateless view whose leases the
 * registry keeps per thread, so that every lock object of one name and registry is the same lock. The
 * registry's javadoc states its rules.
 *
 * <p>Thread-safe.
 */
final class RegistryLock implements DistributedLock {

    /** The longest wait of one request of {@link #lock()}: it asks again after each. */
    private static final Duration LOCK_WAIT = LockOptions.MAX_DURATION;

    final LatchkeyLockRegistry registry;
    final io.latchkey.DistributedLock lock;
    /** When {@link LatchkeyLockRegistry#obtain} last returned this lock, on {@link System#nanoTime()}. */
    volatile long lastObtained;

    RegistryLock(LatchkeyLockRegistry registry, io.latchkey.DistributedLock lock) {
        this.registry = registry;
        this.lock = lock;
        this.lastObtained = System.nanoTime();
    }

    String name() {
        return lock.name();
    }

    @Override
    public void lock() {
        lockUninterruptibly(null);
    }

    @Override
    public void lock(Duration ttl) {
        lockUninterruptibly(ttl(ttl));
    }

    private void lockUninterruptibly(Duration ttl) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (take(LOCK_WAIT, ttl)) {
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
        while (!take(LOCK_WAIT, null)) {
            // a day passed without a grant: ask again
        }
    }

    @Override
    public boolean tryLock() {
        try {
            return take(Duration.ZERO, null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return take(waitOf(unit.toNanos(time)), null);
    }

    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        Objects.requireNonNull(waitTime, "waitTime");
        return take(waitOf(waitTime.toNanos()), ttl(ttl));
    }

    private static Duration waitOf(long nanos) {
        return nanos <= 0 ? Duration.ZERO : Duration.ofNanos(Math.min(nanos, LOCK_WAIT.toNanos()));
    }

    private Duration ttl(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("lock '" + name() + "': ttl must be positive, got " + ttl
                    + "; give how long the lock may be held at most, or call lock() to hold it until unlock()");
        }
        return ttl;
    }

    /** Asks for a lease within {@code wait}, held at most {@code ttl} if not null, and keeps it for the thread. */
    private boolean take(Duration wait, Duration ttl) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before asking for lock '" + name() + "'");
        }
        Optional<Lease> lease = ttl == null ? lock.tryLock(wait)
                : lock.tryLock(LockRequest.builder().wait(wait).atMost(ttl).build());
        lease.ifPresent(l -> registry.push(name(), l, ttl));
        return lease.isPresent();
    }

    @Override
    public void unlock() {
        registry.unlock(name());
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("lock '" + name() + "' of a LatchkeyLockRegistry has no conditions: a"
                + " condition's wait and signal do not reach other processes; use a lock per state, or a message"
                + " channel to signal");
    }

    @Override
    public String toString() {
        return "LatchkeyLockRegistry lock '" + name() + "' on " + lock;
    }
}
