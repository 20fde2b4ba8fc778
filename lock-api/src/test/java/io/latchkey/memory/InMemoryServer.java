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
