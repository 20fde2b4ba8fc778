package io.latchkey.spi;

import java.util.Map;

/**
 * A {@link LockBackend} that also offers semaphores: up to {@code permits} holders of one name, each
 * holding one permit slot. A backend that does not implement this interface has no semaphores, and
 * {@link io.latchkey.LockClient#semaphore} says so, naming the backend.
 *
 * <p>The shared layer drives a permit exactly as a lock: the backend reports the grant and every
 * renewal to the {@link LeaseEvidence} with the same discipline as {@link #acquire} (from a moment
 * before the request was sent, with the time the server keeps a silent holder's permit), and
 * {@link LeaseEvidence#lost} as soon as the permit may have been given to someone else; the shared
 * layer turns that into the validity deadline and the loss signal, and calls
 * {@link PermitLease#release()} at most once.
 *
 * <p>What a backend must keep:
 * <ul>
 *   <li><b>At most {@code permits} holders.</b> A permit is a slot {@code 0..permits-1} held by one
 *       holder at a time, each slot expiring on its own for a silent holder within {@code lease}.</li>
 *   <li><b>Tokens per slot.</b> A grant's token is strictly greater than every earlier grant's of
 *       the same slot ({@link PermitLease}); one counter per name serves as well.</li>
 *   <li><b>One number of permits.</b> The backend stores {@code permits} with the semaphore and
 *       refuses a request with another number while it knows the semaphore (at least while a permit
 *       is held) with an {@link IllegalArgumentException} that names the semaphore and both numbers.</li>
 *   <li><b>Apart from locks.</b> Semaphore state lives where no lock name maps to: a key prefix, path
 *       or topic prefix that the backend's mapping of lock names never produces (for example
 *       {@code <namespace>:semaphore:{name}} beside lock keys {@code <namespace>:{name}} when lock
 *       names are escaped so that they never begin with that prefix, or a sibling subtree such as
 *       {@code /latchkey-semaphores/...} beside {@code /latchkey/...}), so that a semaphore and a lock
 *       of the same name are independent. Names follow the rule of lock names and map without
 *       collisions.</li>
 *   <li><b>Nothing left behind.</b> Once no permit is held or requested, no state of the semaphore
 *       remains but what fencing needs (a token counter).</li>
 * </ul>
 *
 * <p>How the kinds of backend map onto slots: a Redis script over one key per slot (in one hash slot
 * of a cluster, {@code <prefix>:semaphore:{name}:<k>}), each with its own {@code PX} expiry, the
 * permit count and a token counter beside them; ZooKeeper ephemeral nodes {@code slot-<k>} (or
 * ephemeral sequential waiters that take the lowest free slot), the token the slot node's
 * {@code czxid}; etcd keys {@code <prefix>/<k>} created only if absent and bound to the holder's lease,
 * the token their create revision; Kafka a topic of {@code permits} partitions in one consumer group
 * where each member takes at most one partition, the slot being the partition. Unlike locks, the
 * shared layer does not gate the threads of one client: a backend may see several concurrent
 * {@link #acquirePermit} calls for one name from one client, each for its own permit.
 *
 * <p>Implementations must be thread-safe.
 */
public interface SemaphoreBackend extends LockBackend {

    /**
     * Describes where the semaphore lives in the backend, for messages: for example
     * {@code redis key 'latchkey:semaphore:{warehouse}'}.
     */
    String describeSemaphore(String name);

    /**
     * Takes one permit of semaphore {@code name} of {@code permits} permits, waiting until
     * {@code deadline} at most for a holder to release one. Tries at least once even if the deadline
     * has already passed. Reports the grant to {@code evidence} before returning, then every renewal
     * and any loss, as {@link #acquire} does.
     *
     * @return the permit, or {@code null} if every permit stayed held until the deadline
     * @throws IllegalArgumentException if the backend knows the semaphore with another number of
     *     permits; the message names both
     * @throws io.latchkey.LockBackendUnavailableException if the backend cannot be reached; within the
     *     deadline plus {@link io.latchkey.LockOptions#timeout()}
     * @throws InterruptedException if interrupted; nothing is left held or queued
     */
    PermitLease acquirePermit(String name, int permits, Deadline deadline, LeaseEvidence evidence) throws InterruptedException;

    /**
     * What the backend records of each held slot of semaphore {@code name} of {@code permits} permits, read
     * as {@link #inspect} reads a lock: the {@link HolderStamp} text the permit's grant wrote, the slot's
     * token as {@link PermitLease#fencingToken()} gave it, how long the backend keeps the slot for a silent
     * holder, and the grant's time where the backend records one ({@link GrantRecord#waiters()} is
     * {@code -1}: waiters queue for the semaphore, not for a slot). Read-only: it creates nothing on the
     * backend (no key, node, topic or group for a semaphore nobody used), takes no permit and wakes no
     * waiter. Slots at or past {@code permits} are not read.
     *
     * <p>The default refuses: a backend that cannot read its slots says so.
     *
     * @return the held slots' records by slot, each slot in {@code 0..permits-1}; empty if none is held
     * @throws IllegalArgumentException if the backend knows the semaphore with another number of permits;
     *     the message names both, as {@link #acquirePermit}'s
     * @throws io.latchkey.LockBackendUnavailableException if the backend cannot be reached; within
     *     {@link io.latchkey.LockOptions#timeout()}
     * @throws UnsupportedOperationException if this backend cannot read a semaphore's slots
     */
    default Map<Integer, GrantRecord> inspectPermits(String name, int permits) throws InterruptedException {
        throw new UnsupportedOperationException("this backend (" + getClass().getName() + ") does not read a"
                + " semaphore's slots, so semaphore '" + name + "' cannot be inspected");
    }
}
