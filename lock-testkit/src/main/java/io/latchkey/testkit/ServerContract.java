package io.latchkey.testkit;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.CuttableChild;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.fault.OptionsUri;
import io.latchkey.testkit.fault.TcpProxy;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What {@link LockContract} and {@link SemaphoreContract} share: the server's lifecycle (its own or
 * one shared under a key, started by {@link ServerLifecycle}) and the hooks that say how a client
 * reaches it and which bounds the groups derive from its options. Package-private: a backend
 * subclasses one of the two contracts, whose constructors and hooks are as documented here.
 *
 * @param <S> the kind of server, so that the backend's checks reach its own accessors
 */
abstract class ServerContract<S extends LockServer> {

    private final String serverKey;
    private final Supplier<? extends S> startServer;
    private volatile S server;

    /** A contract on a server of its own, started before the first test and closed after the last. */
    ServerContract(Supplier<? extends S> startServer) {
        this.serverKey = null;
        this.startServer = Objects.requireNonNull(startServer, "startServer");
    }

    /** A contract on the server that the test classes of one JVM share under {@code serverKey}. */
    ServerContract(String serverKey, Supplier<? extends S> startServer) {
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

    /**
     * The options of the mutual-exclusion fuzz alone, which hands one lock over 1600 times between
     * threads and clients: {@link #options()} by default. A backend whose waiters learn of a release
     * only at a periodic tick of their own (Kafka's heartbeat) may shorten the tick here, so that the
     * fuzz counts hand-overs rather than ticks; every other test of the contract runs on {@link #options()}.
     */
    protected LockOptions fuzzOptions() {
        return options();
    }

    /** A new client on the server, reached directly. */
    protected LockClient newClient() {
        return newClient(options());
    }

    /** A new client on the server, reached directly, with {@code options}. */
    protected LockClient newClient(LockOptions options) {
        return LockClient.connect(URI.create(server().uri(server().endpoints())), options);
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
     * A holder in a child JVM whose traffic to the server can be cut, for the randomized faults. The
     * default connects the child ({@link #childJvmOptions()}) through a {@link TcpProxy} in front of
     * every endpoint, with {@code server().uri(proxyEndpoints)} and {@link #options()}; a backend that
     * overrides {@link #newCuttableClient()} overrides this the same way.
     */
    protected CuttableChild newCuttableChild() {
        List<TcpProxy> proxies = new ArrayList<>();
        try {
            List<InetSocketAddress> endpoints = new ArrayList<>();
            for (InetSocketAddress target : server().endpoints()) {
                TcpProxy proxy = TcpProxy.start(target);
                proxies.add(proxy);
                endpoints.add(proxy.endpoint());
            }
            ChildHolder child = ChildHolder.start(OptionsUri.of(server().uri(endpoints), options()), childJvmOptions());
            return CuttableChild.throughProxies(child, proxies);
        } catch (RuntimeException | Error e) {
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
}
