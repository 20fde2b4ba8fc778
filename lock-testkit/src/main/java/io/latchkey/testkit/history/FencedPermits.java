package io.latchkey.testkit.history;

import java.util.HashMap;
import java.util.Map;

/**
 * The resource that the holders of a semaphore's permits share, fenced per slot: it keeps the highest
 * token accepted for each slot and rejects a write whose token is lower than its slot's, so that a
 * holder whose slot passed to someone else is refused while the other valid holders keep writing.
 * For grants recorded with {@link History#acquiredPermit}. Thread-safe.
 */
public final class FencedPermits {

    private final String name;
    private final Map<String, FencedResource> slots = new HashMap<>();

    /** A resource for the semaphore {@code name}. */
    public FencedPermits(String name) {
        this.name = name;
    }

    /** Writes on behalf of {@code grant}, fenced by its slot; returns whether the write was accepted. */
    public boolean write(History.Grant grant) {
        FencedResource slot;
        synchronized (slots) {
            slot = slots.computeIfAbsent(grant.lock(), FencedResource::new);
        }
        return slot.write(grant);
    }

    /** How many writes were accepted, over every slot. */
    public int acceptedWrites() {
        synchronized (slots) {
            return slots.values().stream().mapToInt(FencedResource::acceptedWrites).sum();
        }
    }

    @Override
    public String toString() {
        synchronized (slots) {
            return "FencedPermits{'" + name + "', " + slots.values() + '}';
        }
    }
}
