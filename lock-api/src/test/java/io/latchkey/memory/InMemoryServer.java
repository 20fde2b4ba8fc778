package io.latchkey.memory;

import io.latchkey.spi.GrantRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A lock server in memory, shared by several {@link InMemoryBackend}s the way a real server is shared
 * by several processes. Holders expire {@code ttl} after their last renewal, like a server-side lease.
 * Test sources only.
 */
public final class InMemoryServer {

    private final Map<String, Holder> holders = new HashMap<>();
    private final AtomicLong tokens = new AtomicLong();
    private final AtomicLong grants = new AtomicLong();

    private final Map<String, Instant> slots = new HashMap<>();
    /** The holder text written with each lock's last grant. */
    private final Map<String, String> holderTexts = new HashMap<>();

    record Holder(long owner, long expiresAt, long token) {
    }

    /** A semaphore: its number of permits and the holder of each slot (null: free). */
    private static final class Semaphore {
        final int permits;
        final Holder[] slots;

        Semaphore(int permits) {
            this.permits = permits;
            this.slots = new Holder[permits];
        }

        boolean held(int slot, long now) {
            return slots[slot] != null && now - slots[slot].expiresAt() < 0;
        }

        boolean empty(long now) {
            for (int i = 0; i < permits; i++) {
                if (held(i, now)) {
                    return false;
                }
            }
            return true;
        }
    }

    /** Semaphores apart from locks, so that a semaphore and a lock of one name are independent. */
    private final Map<String, Semaphore> semaphores = new HashMap<>();

    /**
     * Grants a free slot of semaphore {@code name} to {@code owner}; returns {slot, token}, or null if
     * every slot is held. The token comes from the counter of locks, so it grows per slot as well.
     *
     * @throws IllegalArgumentException if the semaphore is known with another number of permits
     */
    synchronized long[] tryGrantPermit(String name, int permits, long owner, long ttlNanos) {
        long now = System.nanoTime();
        Semaphore sem = semaphores.get(name);
        if (sem != null && sem.empty(now)) {
            sem = null; // nobody holds it any more: its state is gone, as it would be after cleanup
        }
        if (sem != null && sem.permits != permits) {
            throw new IllegalArgumentException("memory semaphore '" + name + "' has " + sem.permits
                    + " permits, and this call asked for " + permits + ": every holder must use the same number of permits");
        }
        if (sem == null) {
            sem = new Semaphore(permits);
            semaphores.put(name, sem);
        }
        for (int slot = 0; slot < permits; slot++) {
            if (!sem.held(slot, now)) {
                long token = tokens.incrementAndGet();
                sem.slots[slot] = new Holder(owner, now + ttlNanos, token);
                grants.incrementAndGet();
                notifyAll();
                return new long[] {slot, token};
            }
        }
        return null;
    }

    /** Extends the owner's hold of the slot; false if it no longer holds it. */
    synchronized boolean renewPermit(String name, int slot, long owner, long ttlNanos) {
        Semaphore sem = semaphores.get(name);
        long now = System.nanoTime();
        if (sem == null || !sem.held(slot, now) || sem.slots[slot].owner() != owner) {
            return false;
        }
        sem.slots[slot] = new Holder(owner, now + ttlNanos, sem.slots[slot].token());
        return true;
    }

    /** Frees the slot if {@code owner} holds it; never someone else's. Forgets a semaphore nobody holds. */
    synchronized void releasePermit(String name, int slot, long owner) {
        Semaphore sem = semaphores.get(name);
        if (sem == null || sem.slots[slot] == null || sem.slots[slot].owner() != owner) {
            return;
        }
        sem.slots[slot] = null;
        if (sem.empty(System.nanoTime())) {
            semaphores.remove(name);
        }
        notifyAll();
    }

    /** Takes every permit of the semaphore away, as a server-side expiry would. */
    public synchronized void evictSemaphore(String name) {
        semaphores.remove(name);
        notifyAll();
    }

    /** How many slots of the semaphore are held now. */
    public synchronized int heldPermits(String name) {
        Semaphore sem = semaphores.get(name);
        int held = 0;
        long now = System.nanoTime();
        for (int i = 0; sem != null && i < sem.permits; i++) {
            held += sem.held(i, now) ? 1 : 0;
        }
        return held;
    }

    /** How many semaphores the server keeps state for. */
    public synchronized int semaphoreCount() {
        return semaphores.size();
    }

    /** Lets the owner's hold run out {@code ttlNanos} from now, renewed no more; false if it no longer holds it. */
    synchronized boolean expireIn(String name, long owner, long ttlNanos) {
        Holder h = holders.get(name);
        if (h == null || h.owner() != owner || System.nanoTime() - h.expiresAt() >= 0) {
            return false;
        }
        holders.put(name, new Holder(owner, System.nanoTime() + ttlNanos, h.token()));
        return true;
    }

    /** The last completed slot of the lock, or null. */
    synchronized Instant slot(String name) {
        return slots.get(name);
    }

    /** Records the slot if {@code owner} still holds the lock with {@code token}; false if not. */
    synchronized boolean recordSlot(String name, long owner, long token, Instant slot) {
        Holder h = holders.get(name);
        if (h == null || h.owner() != owner || h.token() != token || System.nanoTime() - h.expiresAt() >= 0) {
            return false;
        }
        slots.put(name, slot);
        return true;
    }

    /**
     * Grants the lock to {@code owner} if it is free or expired, recording {@code holderText} with the
     * grant; returns the token, or -1.
     */
    synchronized long tryGrant(String name, long owner, long ttlNanos, String holderText) {
        Holder h = holders.get(name);
        long now = System.nanoTime();
        if (h != null && now - h.expiresAt() < 0) {
            return -1;
        }
        long token = tokens.incrementAndGet();
        holders.put(name, new Holder(owner, now + ttlNanos, token));
        holderTexts.put(name, holderText);
        grants.incrementAndGet();
        notifyAll();
        return token;
    }

    /** The record of lock {@code name}'s grant, if held and not expired. */
    synchronized Optional<GrantRecord> inspect(String name) {
        Holder h = holders.get(name);
        long left = h == null ? 0 : h.expiresAt() - System.nanoTime();
        if (left <= 0) {
            return Optional.empty();
        }
        return Optional.of(new GrantRecord(holderTexts.get(name), h.token(), Duration.ofNanos(left)));
    }

    /** Extends the owner's hold; false if it no longer holds the lock. */
    synchronized boolean renew(String name, long owner, long ttlNanos) {
        Holder h = holders.get(name);
        if (h == null || h.owner() != owner || System.nanoTime() - h.expiresAt() >= 0) {
            return false;
        }
        holders.put(name, new Holder(owner, System.nanoTime() + ttlNanos, h.token()));
        return true;
    }

    /** Releases the lock if {@code owner} holds it; never someone else's. */
    synchronized boolean release(String name, long owner) {
        Holder h = holders.get(name);
        if (h == null || h.owner() != owner) {
            return false;
        }
        holders.remove(name);
        notifyAll();
        return true;
    }

    /** Takes the lock away from whoever holds it, as a server-side expiry would. */
    public synchronized void evict(String name) {
        holders.remove(name);
        notifyAll();
    }

    /** Waits for a change, at most {@code nanos}. */
    synchronized void awaitChange(long nanos) throws InterruptedException {
        if (nanos > 0) {
            long millis = Math.max(1, nanos / 1_000_000);
            wait(Math.min(millis, 50));
        }
    }

    public synchronized boolean isHeld(String name) {
        Holder h = holders.get(name);
        return h != null && System.nanoTime() - h.expiresAt() < 0;
    }

    public synchronized int lockCount() {
        return holders.size();
    }

    public long grantCount() {
        return grants.get();
    }

    /**
     * A read-write lock: its readers and its writer by owner, and the writers waiting, in arrival order,
     * each until its last try plus the ttl (a waiter that crashed stops blocking readers then).
     */
    private static final class ReadWrite {
        final Map<Long, Holder> readers = new HashMap<>();
        Holder writer;
        final java.util.LinkedHashMap<Long, Long> writersWaiting = new java.util.LinkedHashMap<>();

        void expire(long now) {
            readers.values().removeIf(h -> now - h.expiresAt() >= 0);
            if (writer != null && now - writer.expiresAt() >= 0) {
                writer = null;
            }
            writersWaiting.values().removeIf(until -> now - until >= 0);
        }

        boolean empty() {
            return readers.isEmpty() && writer == null && writersWaiting.isEmpty();
        }
    }

    /** Read-write locks apart from locks and semaphores. */
    private final Map<String, ReadWrite> readWrites = new HashMap<>();

    /**
     * Grants read-write lock {@code name} to {@code owner} in the mode asked, if the rules allow:
     * a read while no writer holds or waits, a write while nobody holds and no writer waits before
     * it. A write not granted waits in line. Returns the token, from the one counter, or -1.
     */
    synchronized long tryGrantMode(String name, boolean write, long owner, long ttlNanos) {
        long now = System.nanoTime();
        ReadWrite rw = readWrites.computeIfAbsent(name, k -> new ReadWrite());
        rw.expire(now);
        boolean free;
        if (write) {
            rw.writersWaiting.putIfAbsent(owner, now + ttlNanos);
            rw.writersWaiting.put(owner, now + ttlNanos);
            free = rw.writer == null && rw.readers.isEmpty() && rw.writersWaiting.keySet().iterator().next() == owner;
        } else {
            free = rw.writer == null && rw.writersWaiting.isEmpty();
        }
        if (!free) {
            return -1;
        }
        long token = tokens.incrementAndGet();
        Holder h = new Holder(owner, now + ttlNanos, token);
        if (write) {
            rw.writersWaiting.remove(owner);
            rw.writer = h;
        } else {
            rw.readers.put(owner, h);
        }
        grants.incrementAndGet();
        notifyAll();
        return token;
    }

    /** Takes a writer that gave up out of the line. */
    synchronized void leaveMode(String name, long owner) {
        ReadWrite rw = readWrites.get(name);
        if (rw != null && rw.writersWaiting.remove(owner) != null) {
            forgetIfEmpty(name, rw);
            notifyAll();
        }
    }

    /** Extends the owner's read or write hold; false if it no longer holds. */
    synchronized boolean renewMode(String name, long owner, long ttlNanos) {
        ReadWrite rw = readWrites.get(name);
        long now = System.nanoTime();
        if (rw == null) {
            return false;
        }
        rw.expire(now);
        if (rw.writer != null && rw.writer.owner() == owner) {
            rw.writer = new Holder(owner, now + ttlNanos, rw.writer.token());
            return true;
        }
        Holder r = rw.readers.get(owner);
        if (r == null) {
            return false;
        }
        rw.readers.put(owner, new Holder(owner, now + ttlNanos, r.token()));
        return true;
    }

    /** Releases the owner's read or write hold; never someone else's. */
    synchronized void releaseMode(String name, long owner) {
        ReadWrite rw = readWrites.get(name);
        if (rw == null) {
            return;
        }
        if (rw.writer != null && rw.writer.owner() == owner) {
            rw.writer = null;
        }
        rw.readers.remove(owner);
        forgetIfEmpty(name, rw);
        notifyAll();
    }

    private void forgetIfEmpty(String name, ReadWrite rw) {
        rw.expire(System.nanoTime());
        if (rw.empty()) {
            readWrites.remove(name);
        }
    }

    /** Takes every grant of the read-write lock away, as a server-side expiry would. */
    public synchronized void evictReadWrite(String name) {
        readWrites.remove(name);
        notifyAll();
    }

    /** How many readers hold the read-write lock now. */
    public synchronized int readers(String name) {
        ReadWrite rw = readWrites.get(name);
        if (rw == null) {
            return 0;
        }
        rw.expire(System.nanoTime());
        return rw.readers.size();
    }

    /** Whether a writer holds the read-write lock now. */
    public synchronized boolean writing(String name) {
        ReadWrite rw = readWrites.get(name);
        if (rw == null) {
            return false;
        }
        rw.expire(System.nanoTime());
        return rw.writer != null;
    }

    /** How many writers wait for the read-write lock now. */
    public synchronized int writersWaiting(String name) {
        ReadWrite rw = readWrites.get(name);
        if (rw == null) {
            return 0;
        }
        rw.expire(System.nanoTime());
        return rw.writersWaiting.size();
    }

    /** How many read-write locks the server keeps state for. */
    public synchronized int readWriteCount() {
        readWrites.entrySet().removeIf(e -> {
            e.getValue().expire(System.nanoTime());
            return e.getValue().empty();
        });
        return readWrites.size();
    }
}
