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
 * The read-write lock contract ({@link io.latchkey.DistributedReadWriteLock}), to subclass once per
 * backend that offers read-write locks, beside its {@link LockContract}: readers together and a writer
 * alone, a waiting writer never starved by later readers, the reentrancy table of the shared layer on a
 * real server, one token sequence for both modes, and the lock's faults (kill -9 of a reader or of the
 * writer in a child JVM, a reader cut off the network, a writer paused past its lease, a server restart). Every history
 * is checked by {@link io.latchkey.testkit.history.HistoryChecker#assertModesRespected}.
 *
 * <p>The same shape and hooks as {@link LockContract}; the groups only use the server, so they run
 * beside each other and beside the other contracts of the server.
 *
 * @param <S> the kind of server
 */
@TestClassOrder(ClassOrderer.OrderAnnotation.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(ServerLifecycle.class)
public abstract class ReadWriteContract<S extends LockServer> extends ServerContract<S> {

    /** A contract on a server of this class's own, started before the first test and closed after the last. */
    protected ReadWriteContract(Supplier<? extends S> startServer) {
        super(startServer);
    }

    /** A contract on the server the test classes of one JVM share under {@code serverKey}, as {@link LockContract}'s. */
    protected ReadWriteContract(String serverKey, Supplier<? extends S> startServer) {
        super(serverKey, startServer);
    }

    /**
     * Called after every lease was closed, with the names of the read-write locks a test took: override,
     * as {@link LockContract#assertNothingLeftInBackend}, to check that nothing of them remains in the
     * backend but what fencing needs. The default checks nothing.
     */
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
    }

    @GroupExecution.Beside
    @Nested
    @Order(1)
    @DisplayName("1. Readers together, one writer: exclusion, writers not starved, the reentrancy table, one token sequence")
    class Modes extends ReadWriteExclusionTests {
        @Override
        ReadWriteContract<?> contract() {
            return ReadWriteContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(2)
    @DisplayName("2. Faults: a killed reader frees only its own grant, a killed or paused writer frees the lock within its bound, a cut reader is lost before a writer's grant")
    class Faults extends ReadWriteFaultTests {
        @Override
        ReadWriteContract<?> contract() {
            return ReadWriteContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(4)
    @DisplayName("4. Inspection: each reader's grant and the writer's, as any client reads them; a waiting writer is none")
    class Inspection extends ReadWriteInspectionTests {
        @Override
        ReadWriteContract<?> contract() {
            return ReadWriteContract.this;
        }
    }

    @GroupExecution.Alone
    @Nested
    @Order(3)
    @DisplayName("3. Server restart: readers holding and a writer waiting across it, never a writer beside another holder, usable afterwards")
    class ServerRestart extends ReadWriteRestartTests {
        @Override
        ReadWriteContract<?> contract() {
            return ReadWriteContract.this;
        }
    }
}
