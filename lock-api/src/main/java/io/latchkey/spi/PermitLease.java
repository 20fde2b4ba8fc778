package io.latchkey.spi;

/**
 * One permit of a semaphore held in the backend, owned by this handle: a {@link BackendLease} that
 * also names its slot. Thread-safe.
 *
 * <p>{@link #fencingToken()} is strictly greater than the token of every earlier grant of the same
 * slot of the same semaphore name, across clients, restarts and the backend's cleanup.
 * {@link #release()} frees this slot only, and never a slot now held by someone else. The schedule
 * capabilities of {@link BackendLease} ({@code releaseAfter}, slots records) are not used for permits.
 */
public interface PermitLease extends BackendLease {

    /** The slot this permit holds, from {@code 0} to {@code permits - 1}; no other valid permit holds it. */
    int slot();
}
