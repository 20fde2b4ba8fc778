package io.latchkey.spi;

import java.util.List;
import java.util.Optional;

/**
 * What a backend implements: a non-reentrant lock per name, owned by the returned handle rather than
 * by a thread.
 *
 * <p>The shared layer ({@link LockClients}) builds everything else on top: reentrancy, local gating
 * of the threads of one process, the validity deadline, loss signalling, asynchronous acquisition
 * and closing on shutdown. A backend therefore never sees two concurrent {@link #acquire} calls for
 * the same lock name from the same client.
 *
 * <p>A backend that also offers semaphores implements {@link SemaphoreBackend}; one that offers
 * read-write locks implements {@link ReadWriteBackend}.
 *
 * <p>Implementations must be thread-safe.
 */
public interface LockBackend extends AutoCloseable {

    /**
     * Describes where the lock lives in the backend, for messages: for example
     * {@code redis key 'latchkey:{report:nightly}'} or {@code zookeeper path '/locks/report%3Anightly'}.
     */
    String describe(String lockName);

    /**
     * Acquires the lock, waiting until {@code deadline} at most for a holder to release it. Tries at
     * least once even if the deadline has already passed.
     *
     * <p>Before returning a handle, the backend reports the grant to {@code evidence} with
     * {@link LeaseEvidence#confirmed}; while the handle is held it keeps renewing and reports every
     * confirmation, and it reports {@link LeaseEvidence#lost} as soon as it knows the lock may be gone.
     *
     * @return the handle, or {@code null} if the lock stayed held until the deadline
     * @throws io.latchkey.LockBackendUnavailableException if the backend cannot be reached; within the
     *     deadline plus {@link io.latchkey.LockOptions#timeout()}
     * @throws InterruptedException if interrupted; nothing is left held or queued
     */
    BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException;

    /**
     * Reads what the backend records now of the grant of {@code lockName}, by any client: empty if
     * nobody holds it. Read-only: it changes nothing for a holder or a waiter, and creates nothing on
     * the server for a name nobody holds. The holder text is what this backend wrote with the grant
     * from a {@link HolderStamp}; a grant of a writer that wrote none has a {@code null} holder.
     *
     * @throws io.latchkey.LockBackendUnavailableException if the backend cannot be reached within
     *     {@link io.latchkey.LockOptions#timeout()}
     * @throws UnsupportedOperationException if this backend cannot tell; the default
     */
    default Optional<GrantRecord> inspect(String lockName) throws InterruptedException {
        throw new UnsupportedOperationException(getClass().getName() + " does not read who holds a lock: '"
                + lockName + "' cannot be inspected");
    }

    /**
     * Ends the current grant of {@code lockName}, whoever holds it, as an administrator would (Redisson's
     * {@code forceUnlock}): the lock is free on the backend at once, its holder learns it as a loss
     * ({@link LeaseEvidence#lost}) at its next check of the grant, within its lease at the latest, and the
     * next grant's fencing token is higher than the ended one's, so that a fenced resource refuses the old
     * holder. Waiters stay queued. Nothing is created for a name nobody holds.
     *
     * @return the grant it ended, as {@link #inspect} would have read it; empty if nobody held the lock
     * @throws io.latchkey.LockBackendUnavailableException if the backend cannot be reached within
     *     {@link io.latchkey.LockOptions#timeout()}
     * @throws UnsupportedOperationException if this backend cannot end another client's grant honestly;
     *     the default, and the message says why
     */
    default Optional<GrantRecord> forceRelease(String lockName) throws InterruptedException {
        throw new UnsupportedOperationException(getClass().getName() + " cannot end another client's grant: '"
                + lockName + "' cannot be force-released");
    }

    /**
     * The names of the locks held now whose names start with {@code prefix}, in {@link String#compareTo}
     * order: the first {@code limit} of those after {@code after} (all of them from the start if
     * {@code after} is null). Read-only, as {@link #inspect}. Semaphores, read-write locks and names
     * nobody holds are not listed.
     *
     * @param prefix the start of the names, possibly empty
     * @param limit from 1 to {@link io.latchkey.LockClient#MAX_LIST}
     * @throws io.latchkey.LockBackendUnavailableException if the backend cannot be reached within
     *     {@link io.latchkey.LockOptions#timeout()}
     * @throws UnsupportedOperationException if this backend cannot list its locks; the default
     */
    default List<String> list(String prefix, String after, int limit) throws InterruptedException {
        throw new UnsupportedOperationException(getClass().getName() + " cannot list the held locks");
    }

    /**
     * Why this backend offers no read-write locks, for the message of
     * {@link io.latchkey.LockClient#readWriteLock}; not asked of a {@link ReadWriteBackend}.
     */
    default String whyNoReadWriteLocks() {
        return "it does not implement " + ReadWriteBackend.class.getName();
    }

    /**
     * Whether this backend grants waiters in the order they asked, across clients (the
     * {@code FairOrderingContract} of the test kit). The client layer orders its own threads on one name
     * the same way: in arrival order if true, the default; else a thread that asks while the name's local
     * permit is free takes it ahead of the threads parked for it, as a request of another client may take
     * the backend's free lock ahead of a woken waiter there. That thread, usually the one that just
     * released, then asks the backend at once instead of waking another thread first.
     */
    default boolean fairOrder() {
        return true;
    }

    /** Disconnects and stops every thread the backend started. Called once, after every lease was released. */
    @Override
    void close();
}
