package io.latchkey.testkit;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;

/**
 * The contract plus the fair-ordering capability: waiters are granted the lock in arrival order
 * (FIFO), as ZooKeeper's sequential nodes and etcd's create-revision queue do. A backend that
 * offers the capability subclasses this instead of {@link LockContract}; one that does not, does
 * not claim it, and runs no disabled test for it.
 */
public abstract class FairOrderingContract extends LockContract {

    @Nested
    @Order(100)
    @DisplayName("Fair ordering: waiters are granted the lock in the order they arrived")
    class FairOrdering extends FairOrderingTests {
        @Override
        LockContract contract() {
            return FairOrderingContract.this;
        }
    }
}
