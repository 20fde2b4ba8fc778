package io.latchkey.testkit;

import java.util.function.Supplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;

/**
 * The contract plus the fair-ordering capability: waiters are granted the lock in arrival order
 * (FIFO), as ZooKeeper's sequential nodes and etcd's create-revision queue do. A backend that
 * offers the capability subclasses this instead of {@link LockContract}; one that does not, does
 * not claim it, and runs no disabled test for it.
 *
 * @param <S> the kind of server, as in {@link LockContract}
 */
public abstract class FairOrderingContract<S extends LockServer> extends LockContract<S> {

    /** As {@link LockContract#LockContract(Supplier)}: a server of this class's own. */
    protected FairOrderingContract(Supplier<? extends S> startServer) {
        super(startServer);
    }

    /** As {@link LockContract#LockContract(String, Supplier)}: the server shared under {@code serverKey}. */
    protected FairOrderingContract(String serverKey, Supplier<? extends S> startServer) {
        super(serverKey, startServer);
    }

    @GroupExecution.Beside
    @Nested
    @Order(100)
    @DisplayName("Fair ordering: waiters are granted the lock in the order they arrived")
    class FairOrdering extends FairOrderingTests {
        @Override
        LockContract<?> contract() {
            return FairOrderingContract.this;
        }
    }
}
