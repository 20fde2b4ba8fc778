package io.latchkey.spring;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Keeps a lock taken inside a transaction until the transaction completes.
 *
 * <p>Releasing in a {@code finally} around the method lets the next holder in before the commit, and
 * it then reads the state from before this holder's writes. So the call takes a nested lease of its
 * own grant (reentrancy: at once, no round trip), registered with the transaction: the grant outlives
 * the method and ends when the nested lease is closed after completion, commit or rollback. Before the
 * commit the lease must still be valid, or the commit fails and the transaction rolls back. That check
 * runs after the synchronizations of higher precedence and leaves the commit's own duration open: a
 * lease lost in that window is not caught here, which is what fencing tokens written with the data
 * are for.
 *
 * <p>Loaded only when spring-tx is on the class path.
 */
final class TransactionAwareRelease implements TransactionSynchronization {

    private static final Logger log = LoggerFactory.getLogger(TransactionAwareRelease.class);

    private final Lease lease;

    private TransactionAwareRelease(Lease lease) {
        this.lease = lease;
    }

    static boolean active() {
        return TransactionSynchronizationManager.isSynchronizationActive();
    }

    /** Called inside the transaction on the thread that holds {@code lock}. */
    static void holdUntilCompletion(DistributedLock lock) throws InterruptedException {
        Lease nested = lock.tryLock().orElseThrow(() -> new LockException(lock.name(), "lock '" + lock.name()
                + "' gave the thread that holds it no nested lease; the transaction-aware release cannot keep it"));
        TransactionSynchronizationManager.registerSynchronization(new TransactionAwareRelease(nested));
    }

    @Override
    public int getOrder() {
        // after every other synchronization, connection release included
        return Ordered.LOWEST_PRECEDENCE;
    }

    @Override
    public void beforeCommit(boolean readOnly) {
        lease.ensureValid();
    }

    @Override
    public void afterCompletion(int status) {
        try {
            lease.close();
        } catch (LockException e) {
            log.warn("lock '{}' could not be released after its transaction completed; it expires on its own: {}",
                    lease.lockName(), e.getMessage());
        }
    }
}
