package io.latchkey;

/**
 * A read-write lock: any number of readers at once, or one writer. Get one from
 * {@link LockClient#readWriteLock(String)}; it is cheap, nothing is sent until a lease is requested.
 *
 * <p>Each mode is a whole {@link DistributedLock}: {@code tryLock} with a wait, {@code lock},
 * {@code tryLockAsync}, {@code runLocked}/{@code callLocked} with their requests, reentrancy per
 * thread, leases with a validity deadline, {@code lost()} and a fencing token, release from any
 * thread. The rules, the same on every backend that offers them:
 * <ul>
 *   <li><b>Readers share, a writer excludes.</b> While a writer holds a valid lease, no other lease of
 *       the name is valid, read or write; readers hold at once, of any client or thread.</li>
 *   <li><b>A waiting writer is not starved.</b> A reader that asks after a writer started waiting waits
 *       behind that writer.</li>
 *   <li><b>Reentrancy per thread.</b> Read in read and write in write nest, as for a lock. A thread that
 *       holds the write lock may take the read lock: the read lease nests in the write grant, shares
 *       its validity and token, and keeps the name exclusive until it closes too, so closing the write
 *       lease first is a downgrade with no gap in which another writer could slip in. A thread that
 *       holds only the read lock and asks for the write lock is refused at once with an
 *       {@link IllegalStateException}: it would wait for its own read lease for ever.</li>
 *   <li><b>Fencing.</b> Readers and writers draw tokens from one sequence per name: a writer's token
 *       is greater than every earlier reader's and writer's, a reader's greater than every earlier
 *       writer's. A resource that keeps the token of its last write refuses a write with a lower token,
 *       and a read whose token is lower than the last write's (a read that began before that write).</li>
 *   <li><b>Apart from locks and semaphores.</b> A read-write lock and a lock or semaphore of the same
 *       name are independent.</li>
 * </ul>
 * Listener events name the mode ({@link LockListener.Target.Kind#READ} and
 * {@link LockListener.Target.Kind#WRITE}); a reader's crash releases its own lease within the lease
 * and leaves the other readers holding.
 */
public interface DistributedReadWriteLock {

    /** The name of this read-write lock. */
    String name();

    /** The shared mode: held by any number of readers while no writer holds. */
    DistributedLock readLock();

    /** The exclusive mode: held by one writer while no reader holds. */
    DistributedLock writeLock();

    /**
     * Who holds it now, as any client reads it from the backend: each reader's grant and the writer's,
     * with holder, token, grant time and time left where the backend tells them; a waiting request is
     * none of them. Read-only: it creates nothing on the backend and wakes no waiter. (A mode's own
     * {@link DistributedLock#inspect()} refuses: a mode may have many holders.)
     *
     * @throws LockBackendUnavailableException if the backend cannot be reached; within {@code timeout}
     * @throws UnsupportedOperationException if the backend cannot read a read-write lock's holders
     * @throws IllegalStateException if the client is closed
     * @throws InterruptedException if interrupted while reading
     */
    ReadWriteState inspect() throws InterruptedException;
}
