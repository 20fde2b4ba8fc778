package io.latchkey.spi;

/**
 * A {@link LockBackend} that also offers read-write locks: any number of readers of one name, or one
 * writer. A backend that does not implement this interface has none, and
 * {@link io.latchkey.LockClient#readWriteLock} says so, naming the backend and
 * {@link LockBackend#whyNoReadWriteLocks() why}.
 *
 * <p>The shared layer drives a read or write grant exactly as a lock: the backend reports the grant
 * and every renewal to the {@link LeaseEvidence} with the discipline of {@link #acquire}, and
 * {@link LeaseEvidence#lost} as soon as the grant may have ended; the shared layer makes of it the
 * validity deadline and the loss signal, and calls {@link BackendLease#release()} at most once. The
 * shared layer keeps the per-thread rules (reentrancy, a read nested in a write, a write refused to a
 * thread that reads), so every call here is a new holder of its own:
 * <ul>
 *   <li>the shared layer may call {@link #acquireRead} concurrently for one name from one client, each
 *       call for its own reader, and calls {@link #acquireWrite} for one name from one client one at a
 *       time, while reads of the same client may be held or asked;</li>
 *   <li>a reader and a writer of the same client exclude each other as two clients would.</li>
 * </ul>
 *
 * <p>What a backend must keep:
 * <ul>
 *   <li><b>Readers or one writer.</b> A write is granted only while no read or other write is held; a
 *       read only while no write is held. Each holder's grant expires on its own for a silent holder
 *       within {@code lease}: one reader's crash never frees another reader's grant.</li>
 *   <li><b>Writers first.</b> A read requested while a write request of the name is waiting waits
 *       until that write was granted and released (or gave up), so that a stream of readers never
 *       starves a writer. Requests of one mode are served in the order they arrived as far as the
 *       backend orders anything.</li>
 *   <li><b>One token sequence.</b> Every grant's token, read or write, comes from one strictly
 *       increasing sequence per name, drawn when it is granted: a write's token is greater than every
 *       earlier grant's, a read's greater than every earlier write's.</li>
 *   <li><b>Apart from locks and semaphores.</b> Read-write state lives where no lock or semaphore name
 *       maps to, so that a lock, a semaphore and a read-write lock of one name are independent. A
 *       backend whose well-known library has a read-write recipe (Curator's
 *       {@code InterProcessReadWriteLock}) keeps that recipe's layout, so that the two exclude each other.</li>
 *   <li><b>Nothing left behind.</b> Once no grant is held or requested, no state of the name remains but
 *       what fencing needs.</li>
 * </ul>
 *
 * <p>Implementations must be thread-safe.
 */
public interface ReadWriteBackend extends LockBackend {

    /**
     * Describes where the read-write lock lives in the backend, for messages: for example
     * {@code zookeeper path '/latchkey-rw/table%3Adim'}.
     */
    String describeReadWrite(String name);

    /**
     * Takes a read grant of {@code name}, waiting until {@code deadline} at most while a writer holds or
     * waits. Tries at least once even if the deadline has already passed. Reports the grant to
     * {@code evidence} before returning, then every renewal and any loss, as {@link #acquire} does.
     *
     * @return the grant, or {@code null} if a writer held or waited until the deadline
     * @throws io.latchkey.LockBackendUnavailableException if the backend cannot be reached; within the
     *     deadline plus {@link io.latchkey.LockOptions#timeout()}
     * @throws InterruptedException if interrupted; nothing is left held or queued
     */
    BackendLease acquireRead(String name, Deadline deadline, LeaseEvidence evidence) throws InterruptedException;

    /**
     * Takes the write grant of {@code name}, waiting until {@code deadline} at most while anyone else
     * holds; from its request on, later readers wait behind it. Otherwise as {@link #acquireRead}.
     *
     * @return the grant, or {@code null} if others held until the deadline
     */
    BackendLease acquireWrite(String name, Deadline deadline, LeaseEvidence evidence) throws InterruptedException;

    /**
     * The held grants of read-write lock {@code name}, read as {@link #inspect} reads a lock: each reader's
     * and the writer's holder text, token (as its lease's {@code fencingToken()}), time left and, where the
     * backend records one, time ({@link GrantRecord#since()}). A request that waits holds nothing and is not
     * listed; a read nested in its thread's write grant is that grant. Read-only: it creates nothing on the
     * backend, takes nothing and wakes nobody.
     *
     * <p>The default refuses: a backend that cannot read its holders says so.
     *
     * @throws io.latchkey.LockBackendUnavailableException if the backend cannot be reached; within
     *     {@link io.latchkey.LockOptions#timeout()}
     * @throws UnsupportedOperationException if this backend cannot read a read-write lock's holders
     */
    default ReadWriteRecords inspectReadWrite(String name) throws InterruptedException {
        throw new UnsupportedOperationException("this backend (" + getClass().getName() + ") does not read a"
                + " read-write lock's holders, so read-write lock '" + name + "' cannot be inspected");
    }
}
