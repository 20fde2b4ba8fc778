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
 * The contract of docs/contract.md, to subclass once per backend.
 *
 * <p>A backend's test passes the constructor how to start the server, and whether it is shared with
 * other test classes under a key; the kit starts the server before the first test, hands it to every
 * group through {@link #server()} and closes it after the last test that uses it. Every rule is one
 * {@code @Nested} group of this class, named by a sentence, with one or more tests. Timing bounds derive from {@link #options()} ({@code lease},
 * {@code safetyMargin}, {@code timeout}) and {@link #slack()}, never from constants.
 *
 * <p>Hooks, each with a default: {@link #options()}, {@link #newClient()},
 * {@link #newCuttableClient()} and {@link #newCuttableChild()} (how one client, or a holder in a child
 * JVM, is cut off the network), {@link #childUri()} and
 * {@link #childJvmOptions()} (how a holder in a child JVM connects), {@link #slack()},
 * {@link #isLibraryThread(Thread)} and {@link #assertNothingLeftInBackend(Collection)} (what rule 10
 * checks).
 *
 * <p>The contract needs no Docker itself: the kit's container fixtures check, as they start, that a
 * Docker engine answers, and fail with one clear message if not ({@link ServerImages#requireDocker()}).
 *
 * <p>One instance per test class: the hooks are called on it from every group, and may be called from
 * two groups at once. Tests of one group run one at a time; each takes its own lock names, so that a
 * shared server needs no cleaning between classes. Where JUnit's parallel execution is enabled, groups
 * that only use the server run beside each other, and groups that pause or restart it, count the JVM's
 * threads or time cold starts run alone (the kit's resource lock on the server); without it, one
 * group at a time.
 *
 * @param <S> the kind of server, so that the backend's checks reach its own accessors
 */
@TestClassOrder(ClassOrderer.OrderAnnotation.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(ServerLifecycle.class)
public abstract class LockContract<S extends LockServer> extends ServerContract<S> {

    /**
     * A contract on a server of this class's own: {@code startServer} starts it (and returns once it
     * serves) before the first test, and the kit closes it after the last.
     */
    protected LockContract(Supplier<? extends S> startServer) {
        super(startServer);
    }

    /**
     * A contract on the server that the test classes of one JVM share under {@code serverKey}, with
     * each other and with {@link SharedServer#of} in a backend's other tests: the first class that
     * asks starts it with {@code startServer}, and the kit closes it once every test has run. Classes
     * that use one key must start the same kind of server. Every group of this contract leaves a
     * shared server serving: each test takes its own lock names, and the restart of
     * {@code ServerRestartTests} returns once the server serves again at the same endpoints.
     */
    protected LockContract(String serverKey, Supplier<? extends S> startServer) {
        super(serverKey, startServer);
    }

    /**
     * Rule 10 for what lives in the backend: called after every lease and the client were closed,
     * with the names of the locks the test used. Override to check that no key, node, lease or
     * consumer group member of those locks remains (through the backend's own client). The default
     * checks nothing beyond the library's threads, which the contract checks itself.
     */
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
    }

    @GroupExecution.Beside
    @Nested
    @Order(1)
    @DisplayName("1. Mutual exclusion: at most one valid lease per lock name at any instant")
    class MutualExclusion extends MutualExclusionTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(2)
    @DisplayName("2. Try with a deadline: tryLock returns within wait + timeout, and an unreachable backend is an exception")
    class TryWithDeadline extends TryWithDeadlineTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(3)
    @DisplayName("3. Reentrancy: the holding thread nests, other threads wait, the last close releases")
    class Reentrancy extends ReentrancyTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(4)
    @DisplayName("4. Handle ownership: any thread may close a lease, close is idempotent and never frees another's lock")
    class HandleOwnership extends HandleOwnershipTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(5)
    @DisplayName("5. Crash release: a holder that dies loses the lock within lease + a bound")
    class CrashRelease extends CrashReleaseTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(6)
    @DisplayName("6. Renewal: a live holder keeps the lock far past the lease")
    class Renewal extends RenewalTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(7)
    @DisplayName("7a. Loss is signalled, never silent: a cut or paused holder is invalid before another is granted")
    class LossSignal extends LossSignalTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Alone
    @Nested
    @Order(8)
    @DisplayName("7b. Loss across a server restart: never two valid holders, and the lock usable again")
    class ServerRestart extends ServerRestartTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(9)
    @DisplayName("8. Fencing tokens: every grant's token exceeds all earlier ones")
    class FencingTokens extends FencingTokenTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(10)
    @DisplayName("9. Names: any 1 to 255 characters without control characters, mapped without collisions")
    class LockNames extends LockNameTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Alone
    @Nested
    @Order(11)
    @DisplayName("10. Nothing leaks: after close no thread, connection or backend state remains")
    class NothingLeaks extends NothingLeaksTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(12)
    @DisplayName("tryLockAsync: the same bounds, a lease of no thread, cancellation leaves nothing held")
    class AsyncAcquisition extends AsyncAcquisitionTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(15)
    @DisplayName("Once per slot: clients firing the same slot run the task once, a failed or lost run does not mark it")
    class OncePerSlot extends OncePerSlotTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Alone
    @Nested
    @Order(14)
    @DisplayName("2b. Bounds at the edges: refused port, silent listener, unresolvable host, paused server, four JVMs at once")
    class EdgeBounds extends EdgeBoundsTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(18)
    @DisplayName("Inspection: who holds a lock, its token and time left, as any client reads them from the backend")
    class Inspection extends InspectionTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(19)
    @DisplayName("Admin: the held names under a prefix, and a grant ended by force")
    class Admin extends AdminTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Alone
    @Nested
    @Order(16)
    @DisplayName("2c. Honest messages: a waiter whose own process was paused is told so, not that the server is down")
    class PausedWaiter extends PausedWaiterTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Beside
    @Nested
    @Order(13)
    @DisplayName("Scheduled jobs: a task under the lock, atMost and atLeast per call, lock events")
    class ScheduledJobs extends ScheduledJobTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @GroupExecution.Alone
    @Nested
    @Order(17)
    @DisplayName("1, 7, 8 under random faults: child JVMs killed, stopped, cut, the server paused and restarted;"
            + " claimed leases never overlap (seed: -Dlatchkey.randomized.seed)")
    class RandomizedFaults extends RandomizedFaultsTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }
}
