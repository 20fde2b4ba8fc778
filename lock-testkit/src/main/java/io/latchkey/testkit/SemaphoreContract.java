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
 * The semaphore contract ({@link io.latchkey.DistributedSemaphore}), to subclass once per backend that
 * implements {@link io.latchkey.spi.SemaphoreBackend}, beside its {@link LockContract}.
 *
 * <p>The same shape and hooks as {@link LockContract}: the constructor says how to start the server
 * (and whether it is shared under a key), every promise is one {@code @Nested} group named by a
 * sentence, and timing bounds derive from {@link #options()} and {@link #slack()}. The faults are the
 * kit's real ones: kill -9 and SIGSTOP of a holder in a child JVM, a network cut of one client, a
 * restart of the server ({@link LockServer#restart()}). Every
 * history of grants is checked by {@link io.latchkey.testkit.history.HistoryChecker#assertPermitsRespected}:
 * never more than {@code N} valid leases at once, one valid holder per slot, tokens growing per slot,
 * and a resource fenced per slot that never accepts a superseded holder's write.
 *
 * <p>One instance per test class; tests of one group run one at a time, each takes its own semaphore
 * names, and groups run beside each other as {@link LockContract}'s do: the restart and leak groups alone.
 *
 * @param <S> the kind of server
 */
@TestClassOrder(ClassOrderer.OrderAnnotation.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(ServerLifecycle.class)
public abstract class SemaphoreContract<S extends LockServer> extends ServerContract<S> {

    /** A contract on a server of this class's own, started before the first test and closed after the last. */
    protected SemaphoreContract(Supplier<? extends S> startServer) {
        super(startServer);
    }

    /** A contract on the server the test classes of one JVM share under {@code serverKey}, as {@link LockContract}'s. */
    protected SemaphoreContract(String serverKey, Supplier<? extends S> startServer) {
        super(serverKey, startServer);
    }

    /**
     * Called after every lease and the client were closed, with the names of the semaphores the test
     * used: override to check that no key, node, lease or group member of them remains. The default
     * checks nothing beyond the library's threads, which the contract checks itself.
     */
    protected void assertNothingLeftInBackend(Collection<String> semaphoreNames) {
    }

    @GroupExecution.Beside
    @Nested
    @Order(1)
    @DisplayName("1. At most N valid leases at once, across threads, clients and processes; the N+1-th waits for a release")
    class AtMostN extends SemaphoreExclusionTests {
        @Override
        SemaphoreContract<?> contract() {
            return SemaphoreContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(2)
    @DisplayName("2. Try with a deadline: tryAcquire returns within wait + timeout, and an unreachable backend is an exception")
    class TryWithDeadline extends SemaphoreDeadlineTests {
        @Override
        SemaphoreContract<?> contract() {
            return SemaphoreContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(3)
    @DisplayName("3. Permits: every holder agrees on N, each tryAcquire takes another permit, any thread may close a lease")
    class Permits extends SemaphorePermitTests {
        @Override
        SemaphoreContract<?> contract() {
            return SemaphoreContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(5)
    @DisplayName("5. Crash release: a holder that dies frees its permit within lease + a bound")
    class CrashRelease extends SemaphoreCrashTests {
        @Override
        SemaphoreContract<?> contract() {
            return SemaphoreContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(6)
    @DisplayName("6. Renewal: a live holder keeps its permit far past the lease")
    class Renewal extends SemaphoreRenewalTests {
        @Override
        SemaphoreContract<?> contract() {
            return SemaphoreContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(7)
    @DisplayName("7. Loss is signalled, never silent: a paused or cut holder is invalid before its slot is granted again")
    class LossSignal extends SemaphoreLossTests {
        @Override
        SemaphoreContract<?> contract() {
            return SemaphoreContract.this;
        }
    }

    @GroupExecution.Alone
    @Nested
    @Order(8)
    @DisplayName("7b. Loss across a server restart: never more than N valid leases, and the semaphore usable again")
    class ServerRestart extends SemaphoreRestartTests {
        @Override
        SemaphoreContract<?> contract() {
            return SemaphoreContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(9)
    @DisplayName("9. Names: the rule of lock names, mapped without collisions, apart from locks of the same name")
    class Names extends SemaphoreNameTests {
        @Override
        SemaphoreContract<?> contract() {
            return SemaphoreContract.this;
        }
    }

    @GroupExecution.Alone
    @Nested
    @Order(10)
    @DisplayName("10. Nothing leaks: after close no thread, connection or backend state of a semaphore remains")
    class NothingLeaks extends SemaphoreLeakTests {
        @Override
        SemaphoreContract<?> contract() {
            return SemaphoreContract.this;
        }
    }
}
