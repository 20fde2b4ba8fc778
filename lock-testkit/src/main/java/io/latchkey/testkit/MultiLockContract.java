package io.latchkey.testkit;

import java.util.Collection;
import java.util.function.Supplier;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestClassOrder;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The multi-lock contract ({@link io.latchkey.MultiLock}), to subclass once per backend beside its
 * {@link LockContract}: all the names or none, one global order so that holders asking for the same
 * names in any order never deadlock, a token per name, and the lock's faults (kill -9 of a holder in a
 * child JVM, a network cut of one client) freeing or invalidating every name at once. Every history is
 * checked per name by {@link io.latchkey.testkit.history.HistoryChecker#assertConsistent}.
 *
 * <p>The same shape and hooks as {@link LockContract}; the groups only use the server, so they run
 * beside each other and beside the other contracts of the server.
 *
 * @param <S> the kind of server
 */
@TestClassOrder(ClassOrderer.OrderAnnotation.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(ServerLifecycle.class)
public abstract class MultiLockContract<S extends LockServer> extends ServerContract<S> {

    /** A contract on a server of this class's own, started before the first test and closed after the last. */
    protected MultiLockContract(Supplier<? extends S> startServer) {
        super(startServer);
    }

    /** A contract on the server the test classes of one JVM share under {@code serverKey}, as {@link LockContract}'s. */
    protected MultiLockContract(String serverKey, Supplier<? extends S> startServer) {
        super(serverKey, startServer);
    }

    /**
     * Called after every lease and the client were closed, with the names of the locks a test took as
     * multi-locks: override, as {@link LockContract#assertNothingLeftInBackend}, to check that nothing of
     * them remains in the backend. The default checks nothing.
     */
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
    }

    @GroupExecution.Beside
    @Nested
    @Order(1)
    @DisplayName("1. All or none: a multi-lock holds every name, each with its own token, or none of them")
    class AllOrNone extends MultiLockExclusionTests {
        @Override
        MultiLockContract<?> contract() {
            return MultiLockContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(2)
    @DisplayName("2. No deadlock: holders asking for overlapping names in opposite orders, on threads, clients and a child JVM, all finish")
    class NoDeadlock extends MultiLockOrderTests {
        @Override
        MultiLockContract<?> contract() {
            return MultiLockContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(3)
    @DisplayName("3. Faults: a killed holder frees every name within lease + a bound; a cut holder loses the whole before any name is granted again")
    class Faults extends MultiLockFaultTests {
        @Override
        MultiLockContract<?> contract() {
            return MultiLockContract.this;
        }
    }
}
