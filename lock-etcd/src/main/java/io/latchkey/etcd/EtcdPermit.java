package io.latchkey.etcd;

import io.etcd.jetcd.ByteSequence;
import io.latchkey.spi.PermitLease;
import java.time.Duration;

/**
 * One permit of a semaphore: the slot key {@code <semaphore prefix><slot>} bound to the client's
 * {@link EtcdSession}, renewed, lost and released exactly as a lock's key ({@link EtcdLease}); the
 * fencing token is the slot key's create revision. Thread-safe.
 */
final class EtcdPermit extends EtcdLease implements PermitLease {

    private final int slot;
    private final Runnable onEnd;

    EtcdPermit(EtcdLockBackend backend, String name, ByteSequence key, EtcdSession session, int slot, Runnable onEnd) {
        super(backend, name, key, session, null);
        this.slot = slot;
        this.onEnd = onEnd;
    }

    @Override
    public int slot() {
        return slot;
    }

    @Override
    String subject() {
        return backend.semaphoreSubject(lockName);
    }

    @Override
    void ended() {
        onEnd.run();
    }

    /** A slot key's name is the slot's: nothing to reuse. */
    @Override
    void deleteConfirmed() {
    }

    /** Permits have no {@code atLeast}: the shared layer never asks, and the key is not handed to a lease of its own. */
    @Override
    public boolean releaseAfter(Duration remaining) {
        return false;
    }

    @Override
    public boolean recordsSlots() {
        return false;
    }

    /** Only its holder, its lease or a hand ends it: no client ends a permit through Latchkey. */
    @Override
    boolean checkedAtRenewal() {
        return false;
    }

    @Override
    public String toString() {
        return "EtcdPermit{semaphore='" + lockName + "', key='" + keyString() + "', slot=" + slot + ", token="
                + fencingToken() + '}';
    }
}
