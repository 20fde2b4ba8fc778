package io.latchkey.spring.integration;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ConcurrentModificationException;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.scheduling.TaskScheduler;

/**
 * A Spring Integration {@link org.springframework.integration.support.locks.LockRegistry} on a Latchkey
 * {@link LockClient}, for {@code LockRegistryLeaderInitiator}, the aggregator and any other user of a
 * lock registry: a drop-in for {@code RedisLockRegistry} or {@code JdbcLockRegistry} on any Latchkey backend.
 *
 * <p>{@link #obtain(Object)} returns the lock named {@code lockKey.toString()}, checked by the rule of
 * lock names ({@link LockClient#checkName}); the same key gives the same lock object until
 * {@link #expireUnusedOlderThan} drops it, and any lock object of one name behaves as the same lock. The
 * rules, those of {@code ReentrantLock} and Spring Integration's own registries where a distributed lock
 * allows them:
 * <ul>
 *   <li><b>Exclusion</b>: one holder at a time across every client of the backend and namespace; threads
 *       of this process wait like any other contender (Latchkey queues them locally).</li>
 *   <li><b>Reentrancy</b>: the thread that holds the lock gets it again at once, without asking the
 *       backend; it is released when that thread has called {@code unlock()} once per lock call. The
 *       count is kept per client: two registries on one {@code LockClient} share the thread's grant.</li>
 *   <li><b>Who may unlock</b>: only the thread that locked; any other thread, or one more unlock than
 *       locks, is an {@link IllegalMonitorStateException} (as {@code JdbcLockRegistry} and
 *       {@code ReentrantLock}; {@code RedisLockRegistry} throws an {@code IllegalStateException}).</li>
 *   <li><b>Waiting</b>: {@code lock()} waits until granted and keeps waiting through an interrupt, which
 *       it restores before it returns; {@code lockInterruptibly()} and the timed {@code tryLock} stop at
 *       one; {@code tryLock()} does not wait, and an interrupt while it asks the backend is a
 *       {@code false} with the interrupt restored.</li>
 *   <li><b>Renewal</b> is automatic: the client renews a held lock until it is unlocked, so nothing
 *       expires under a slow task of a live process; a crashed holder's lock frees within the client's
 *       {@code lease} option. A renewal task scheduler is not needed and is ignored.</li>
 *   <li><b>Time to live</b> (Spring Integration 7's {@link DistributedLock}): {@code lock(ttl)} and
 *       {@code tryLock(wait, ttl)} bound the new grant to at most {@code ttl} (Latchkey's
 *       {@link io.latchkey.LockRequest} {@code atMost}), renewals included; a nested lock keeps the bound
 *       of the grant it nests in.</li>
 *   <li><b>Loss</b>: if the lease is lost while held (expired through a network cut or a pause, revoked,
 *       or its client closed), the thread's next lock call throws a {@link io.latchkey.LockLostException},
 *       and its last {@code unlock()} releases what is left and then throws a
 *       {@link ConcurrentModificationException}, as Spring Integration's Redis and JDBC registries do
 *       for a lock that expired in the store: what ran under it may have overlapped another holder.</li>
 *   <li><b>Failures</b>: a backend that cannot be reached is a
 *       {@link io.latchkey.LockBackendUnavailableException} from a lock call within its wait plus the
 *       client's {@code timeout}, never taken for a held lock; {@code newCondition()} is refused.</li>
 * </ul>
 *
 * <p><b>The lease under the lock</b>: {@link #lease(Object)} (or {@link #lease(Lock)}) gives the code
 * running under the lock the calling thread's Latchkey {@link Lease}: {@link Lease#lost()} to learn of
 * a loss when it happens rather than at {@code unlock()}, and {@link Lease#fencingToken()} to hand to a
 * resource that refuses stale writers.
 *
 * <p>Thread-safety: thread-safe. The registry does not own the client: closing the client, not the
 * registry, releases what is held.
 */
public final class LatchkeyLockRegistry implements ExpirableLockRegistry<DistributedLock>,
        RenewableLockRegistry<DistributedLock> {

    private static final Logger LOG = LoggerFactory.getLogger(LatchkeyLockRegistry.class);

    /** One grant of the calling thread: the lease and the ttl it was asked with, null if none. */
    private record Held(Lease lease, Duration ttl) {
    }

    private final LockClient client;
    private final ConcurrentHashMap<String, RegistryLock> locks = new ConcurrentHashMap<>();
    /** The calling thread's open leases by lock name, latest last. */
    private final ThreadLocal<Map<String, Deque<Held>>> held = ThreadLocal.withInitial(HashMap::new);

    /**
     * A registry of the locks of {@code client}; the client's options (lease, timeout, namespace) apply
     * to every lock.
     */
    public LatchkeyLockRegistry(LockClient client) {
        this.client = Objects.requireNonNull(client, "client");
    }

    /** The client this registry's locks are taken through. */
    public LockClient client() {
        return client;
    }

    /**
     * The lock named {@code lockKey.toString()}; cheap, nothing is sent to the backend.
     *
     * @throws IllegalArgumentException if the key's text is not a lock name; the message says why
     * @throws IllegalStateException if the client is closed
     */
    @Override
    public DistributedLock obtain(Object lockKey) {
        String name = nameOf(lockKey);
        return locks.compute(name, (n, lock) -> {
            RegistryLock l = lock != null ? lock : new RegistryLock(this, client.lock(n));
            l.lastObtained = System.nanoTime();
            return l;
        });
    }

    /**
     * The calling thread's latest lease of the lock of {@code lockKey} through this registry, if it holds
     * one: its {@link Lease#lost()} completes if the lock is lost, and its {@link Lease#fencingToken()}
     * is higher than every earlier holder's.
     *
     * @throws IllegalArgumentException if the key's text is not a lock name
     */
    public Optional<Lease> lease(Object lockKey) {
        Deque<Held> leases = held.get().get(nameOf(lockKey));
        return leases == null ? Optional.empty() : Optional.of(leases.getLast().lease());
    }

    /**
     * The calling thread's latest lease of {@code lock}, a lock a {@code LatchkeyLockRegistry} returned;
     * see {@link #lease(Object)}.
     *
     * @throws IllegalArgumentException if {@code lock} did not come from a {@code LatchkeyLockRegistry}
     */
    public static Optional<Lease> lease(Lock lock) {
        if (lock instanceof RegistryLock own) {
            return own.registry.lease(own.name());
        }
        throw new IllegalArgumentException("lock " + lock + " was not obtained from a LatchkeyLockRegistry, so it has"
                + " no Latchkey lease; pass a lock from LatchkeyLockRegistry.obtain()");
    }

    /**
     * Drops the lock objects obtained more than {@code age} milliseconds ago that this client does not
     * hold, so that a registry of many keys stays small. A later {@link #obtain} of a dropped key returns a
     * new object of the same lock; nothing on the backend changes.
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = System.nanoTime();
        long ageNanos = TimeUnit.MILLISECONDS.toNanos(age);
        locks.values().removeIf(l -> now - l.lastObtained > ageNanos && !l.lock.isHeldByThisClient());
    }

    /**
     * Checks that the calling thread holds the lock of {@code lockKey} with a valid lease: the client
     * renews it on its own until it is unlocked, so there is nothing more to do.
     *
     * @throws IllegalMonitorStateException if the calling thread does not hold the lock through this registry
     * @throws IllegalStateException if the lease was lost: the lock cannot be renewed
     */
    @Override
    public void renewLock(Object lockKey) {
        renewable(nameOf(lockKey));
    }

    /**
     * {@link #renewLock(Object)}, for a lock taken without a ttl: the client keeps it until it is
     * unlocked, longer than any {@code ttl}. A grant taken with a ttl keeps its end: Latchkey cannot move
     * the {@code atMost} bound of a grant.
     *
     * @throws IllegalMonitorStateException if the calling thread does not hold the lock through this registry
     * @throws IllegalStateException if the lease was lost, or the grant was taken with a ttl
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        String name = nameOf(lockKey);
        Held grant = renewable(name);
        if (grant.ttl() != null) {
            throw new IllegalStateException("lock '" + name + "' was taken with a ttl of " + grant.ttl()
                    + ", which a Latchkey grant keeps: it cannot be renewed to " + ttl + "; unlock it and lock it"
                    + " again with the new ttl, or lock without a ttl to have it renewed until unlock()");
        }
    }

    /** The outermost grant of {@code name} the calling thread holds, checked to be valid. */
    private Held renewable(String name) {
        Deque<Held> leases = held.get().get(name);
        if (leases == null) {
            throw notHeld(name, "renew");
        }
        Held grant = leases.getFirst();
        if (!grant.lease().isValid()) {
            throw new IllegalStateException("could not renew lock '" + name + "': its lease was lost (see"
                    + " Lease.lost() for why) and another holder may have it; unlock() it and lock it again");
        }
        return grant;
    }

    /**
     * Ignored: the client renews every held lock on its own threads, from its {@code lease} option.
     */
    @Override
    public void setRenewalTaskScheduler(TaskScheduler renewalTaskScheduler) {
        // nothing to schedule: renewal is the client's
    }

    /** Keeps {@code lease}, just granted to the calling thread, as its latest of {@code name}. */
    void push(String name, Lease lease, Duration ttl) {
        held.get().computeIfAbsent(name, n -> new ArrayDeque<>()).addLast(new Held(lease, ttl));
    }

    /** Closes the calling thread's latest lease of {@code name}; see the class's rules. */
    void unlock(String name) {
        Map<String, Deque<Held>> mine = held.get();
        Deque<Held> leases = mine.get(name);
        if (leases == null) {
            throw notHeld(name, "unlock");
        }
        Lease lease = leases.removeLast().lease();
        boolean last = leases.isEmpty();
        if (last) {
            mine.remove(name);
        }
        boolean valid = lease.isValid();
        lease.close();
        if (!valid && last) {
            LOG.warn("lock '{}' was lost before unlock() on thread '{}': what ran under it may have overlapped"
                    + " another holder", name, Thread.currentThread().getName());
            throw new ConcurrentModificationException("lock '" + name + "' was released, but its lease had been"
                    + " lost or had expired before unlock(): what ran under it may have overlapped another holder;"
                    + " watch LatchkeyLockRegistry.lease(key).lost() and hand the fencing token to the resource");
        }
    }

    private static IllegalMonitorStateException notHeld(String name, String what) {
        return new IllegalMonitorStateException("lock '" + name + "' is not held by thread '"
                + Thread.currentThread().getName() + "' through this LatchkeyLockRegistry, so it cannot " + what
                + " it: only the thread that locked it may, once per lock call");
    }

    /** The lock name of {@code lockKey}: its text, checked by the rule of names. */
    static String nameOf(Object lockKey) {
        Objects.requireNonNull(lockKey, "lockKey must not be null: give the key whose text names the lock");
        String name = lockKey.toString();
        try {
            return LockClient.checkName(name);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("lock key '" + name + "' (a " + lockKey.getClass().getName()
                    + ") is not a Latchkey lock name: " + e.getMessage() + "; give a key whose toString() keeps"
                    + " the rule", e);
        }
    }

    @Override
    public String toString() {
        return "LatchkeyLockRegistry{" + client + ", " + locks.size() + " locks}";
    }
}
