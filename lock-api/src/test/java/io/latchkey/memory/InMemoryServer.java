package io.latchkey.memory;

import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
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

    /** Grants the lock to {@code owner} if it is free or expired; returns the token, or -1. */
    synchronized long tryGrant(String name, long owner, long ttlNanos) {
        Holder h = holders.get(name);
        long now = System.nanoTime();
        if (h != null && now - h.expiresAt() < 0) {
            return -1;
        }
        long token = tokens.incrementAndGet();
        holders.put(name, new Holder(owner, now + ttlNanos, token));
        grants.incrementAndGet();
        notifyAll();
        return token;
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
}
