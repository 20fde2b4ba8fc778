package io.latchkey.testkit;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.fault.OptionsUri;
import io.latchkey.testkit.fault.TcpProxy;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestClassOrder;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

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
 * {@link #newCuttableClient()} (how one client is cut off the network), {@link #childUri()} and
 * {@link #childJvmOptions()} (how a holder in a child JVM connects), {@link #slack()},
 * {@link #isLibraryThread(Thread)} and {@link #assertNothingLeftInBackend(Collection)} (what rule 10
 * checks).
 *
 * <p>The contract needs no Docker itself: the kit's container fixtures check, as they start, that a
 * Docker engine answers, and fail with one clear message if not ({@link ServerImages#requireDocker()}).
 *
 * <p>One instance per test class: the hooks are called on it from every group. Tests of one class
 * run one at a time (the JUnit default); each takes its own lock names, so that a shared server
 * needs no cleaning between classes.
 *
 * @param <S> the kind of server, so that the backend's checks reach its own accessors
 */
@TestClassOrder(ClassOrderer.OrderAnnotation.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(ServerLifecycle.class)
public abstract class LockContract<S extends LockServer> {

    private final String serverKey;
    private final Supplier<? extends S> startServer;
    private volatile S server;

    /**
     * A contract on a server of this class's own: {@code startServer} starts it (and returns once it
     * serves) before the first test, and the kit closes it after the last.
     */
    protected LockContract(Supplier<? extends S> startServer) {
        this.serverKey = null;
        this.startServer = Objects.requireNonNull(startServer, "startServer");
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
        this.serverKey = SharedServer.requireKey(serverKey);
        this.startServer = Objects.requireNonNull(startServer, "startServer");
    }

    /** The running server; there from the first test of the class on. */
    protected final S server() {
        return ServerLifecycle.started(server, this, "server()");
    }

    /** Starts or finds the server for the class of {@code context}; called by {@link ServerLifecycle}. */
    final void useServer(ExtensionContext context) {
        server = serverKey != null
                ? SharedServer.in(context.getRoot(), serverKey, startServer)
                : SharedServer.in(context, getClass().getName(), startServer);
    }

    /**
     * The options every client of the contract gets. The default lease (6 s) is short so that the
     * failover tests run quickly; timing assertions derive from whatever this returns.
     */
    protected LockOptions options() {
        return LockOptions.builder().lease(Duration.ofSeconds(6)).build();
    }

    /** A new client on the server, reached directly. */
    protected LockClient newClient() {
        return LockClient.connect(URI.create(server().uri(server().endpoints())), options());
    }

    /**
     * A new client whose traffic to the server can be cut. The default puts a {@link TcpProxy} in
     * front of every endpoint and connects through them with {@code server().uri(proxyEndpoints)};
     * a backend whose clients follow addresses announced by the server overrides this.
     */
    protected CuttableClient newCuttableClient() {
        List<TcpProxy> proxies = new ArrayList<>();
        try {
            List<InetSocketAddress> endpoints = new ArrayList<>();
            for (InetSocketAddress target : server().endpoints()) {
                TcpProxy proxy = TcpProxy.start(target);
                proxies.add(proxy);
                endpoints.add(proxy.endpoint());
            }
            LockClient client = LockClient.connect(URI.create(server().uri(endpoints)), options());
            return CuttableClient.throughProxies(client, proxies);
        } catch (RuntimeException e) {
            proxies.forEach(TcpProxy::close);
            throw e;
        }
    }

    /**
     * The URI a holder in a child JVM connects with, carrying every option in its query. The default
     * is the server's direct endpoints plus {@link #options()}.
     */
    protected String childUri() {
        return OptionsUri.of(server().uri(server().endpoints()), options());
    }

    /**
     * Extra options for the child JVMs of the kill and pause faults, such as system properties the
     * backend's client needs; none by default. The class path is always the test's.
     */
    protected List<String> childJvmOptions() {
        return List.of();
    }

    /**
     * The small bound added to the configured times in every timing assertion, for scheduling and
     * one extra round trip: by default the larger of {@code safetyMargin} and half of {@code timeout}.
     */
    protected Duration slack() {
        Duration halfTimeout = options().timeout().dividedBy(2);
        Duration margin = options().safetyMargin();
        return margin.compareTo(halfTimeout) > 0 ? margin : halfTimeout;
    }

    /**
     * Whether {@code thread} belongs to the library, for rule 10: by default threads whose name starts
     * with {@code latchkey-}. A backend may widen it to the threads of its client library.
     */
    protected boolean isLibraryThread(Thread thread) {
        return thread.getName().startsWith("latchkey-");
    }

    /**
     * Rule 10 for what lives in the backend: called after every lease and the client were closed,
     * with the names of the locks the test used. Override to check that no key, node, lease or
     * consumer group member of those locks remains (through the backend's own client). The default
     * checks nothing beyond the library's threads, which the contract checks itself.
     */
    protected void assertNothingLeftInBackend(Collection<String> lockNames) {
    }

    @Nested
    @Order(1)
    @DisplayName("1. Mutual exclusion: at most one valid lease per lock name at any instant")
    class MutualExclusion extends MutualExclusionTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @Nested
    @Order(2)
    @DisplayName("2. Try with a deadline: tryLock returns within wait + timeout, and an unreachable backend is an exception")
    class TryWithDeadline extends TryWithDeadlineTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @Nested
    @Order(3)
    @DisplayName("3. Reentrancy: the holding thread nests, other threads wait, the last close releases")
    class Reentrancy extends ReentrancyTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @Nested
    @Order(4)
    @DisplayName("4. Handle ownership: any thread may close a lease, close is idempotent and never frees another's lock")
    class HandleOwnership extends HandleOwnershipTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @Nested
    @Order(5)
    @DisplayName("5. Crash release: a holder that dies loses the lock within lease + a bound")
    class CrashRelease extends CrashReleaseTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @Nested
    @Order(6)
    @DisplayName("6. Renewal: a live holder keeps the lock far past the lease")
    class Renewal extends RenewalTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @Nested
    @Order(7)
    @DisplayName("7a. Loss is signalled, never silent: a cut or paused holder is invalid before another is granted")
    class LossSignal extends LossSignalTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @Nested
    @Order(8)
    @DisplayName("7b. Loss across a server restart: never two valid holders, and the lock usable again")
    class ServerRestart extends ServerRestartTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @Nested
    @Order(9)
    @DisplayName("8. Fencing tokens: every grant's token exceeds all earlier ones")
    class FencingTokens extends FencingTokenTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @Nested
    @Order(10)
    @DisplayName("9. Names: any 1 to 255 characters without control characters, mapped without collisions")
    class LockNames extends LockNameTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @Nested
    @Order(11)
    @DisplayName("10. Nothing leaks: after close no thread, connection or backend state remains")
    class NothingLeaks extends NothingLeaksTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @Nested
    @Order(12)
    @DisplayName("tryLockAsync: the same bounds, a lease of no thread, cancellation leaves nothing held")
    class AsyncAcquisition extends AsyncAcquisitionTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @Nested
    @Order(15)
    @DisplayName("Once per slot: clients firing the same slot run the task once, a failed or lost run does not mark it")
    class OncePerSlot extends OncePerSlotTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @Nested
    @Order(14)
    @DisplayName("2b. Bounds at the edges: refused port, silent listener, unresolvable host, paused server, four JVMs at once")
    class EdgeBounds extends EdgeBoundsTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @Nested
    @Order(16)
    @DisplayName("2c. Honest messages: a waiter whose own process was paused is told so, not that the server is down")
    class PausedWaiter extends PausedWaiterTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }

    @Nested
    @Order(13)
    @DisplayName("Scheduled jobs: a task under the lock, atMost and atLeast per call, lock events")
    class ScheduledJobs extends ScheduledJobTests {
        @Override
        LockContract<?> contract() {
            return LockContract.this;
        }
    }
}
