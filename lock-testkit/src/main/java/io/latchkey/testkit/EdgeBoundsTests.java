package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.CuttableClient;
import io.latchkey.testkit.fault.TcpProxy;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Rule 2 at the edges: {@code connect}, {@code tryLock}, {@code Lease.close} and
 * {@code LockClient.close} keep their bounds whatever is wrong on the way to the server — a refused
 * port, a listener that accepts TCP and never answers, a host name that does not resolve, a server
 * whose processes are frozen — and fail with {@link LockBackendUnavailableException}: never a hang,
 * never an empty result that would look like "someone else holds it".
 *
 * <p>The bounds: {@code connect} within {@code timeout}; {@code tryLock(wait)} within
 * {@code wait + timeout}; {@code Lease.close()} within {@code timeout} (one round trip);
 * {@code LockClient.close()} holding one lease within {@code 2 × timeout} (the release, then the
 * disconnect); each plus {@link LockContract#slack()}. A backend may connect lazily: then
 * {@code connect} returns and the first {@code tryLock} fails within its own bound, which the tests
 * accept.
 *
 * <p>The paused-server tests freeze the server with {@link LockServer#pause()} and thaw it before
 * the test ends, so a shared server keeps serving. Tagged {@code edges}:
 * {@code -Dtest=<contract test> -Dgroups=edges} runs this group alone.
 */
@Tag("edges")
abstract class EdgeBoundsTests extends ContractGroup {

    /** Client JVMs that connect at once in {@link #fourJvmsConnectAtOnce()}. */
    static final int CONCURRENT_JVMS = 4;
    /** The timeout the concurrent JVMs connect with, as the issue measured it. */
    static final Duration CONCURRENT_TIMEOUT = Duration.ofSeconds(2);

    // ---- refused port

    @Test
    @DisplayName("refused port: connect, or the first tryLock, fails within its bound with LockBackendUnavailableException")
    void refusedPortFailsWithinBound() throws Exception {
        assertConnectOrFirstTryLockFails(contract().server().uri(List.of(closedPort())), "a refused port");
    }

    // ---- a listener that accepts TCP and never answers

    @Test
    @DisplayName("silent listener: connect, or the first tryLock, fails within its bound with LockBackendUnavailableException")
    void silentListenerFailsConnectWithinBound() throws Exception {
        TcpProxy blackhole = track(TcpProxy.start(contract().server().endpoints().get(0)));
        blackhole.cut(); // accepts connections and forwards nothing, answers nothing
        assertConnectOrFirstTryLockFails(contract().server().uri(List.of(blackhole.endpoint())),
                "a listener that never answers");
    }

    @Test
    @DisplayName("silent listener: closing a lease after the cut fails within timeout + slack with LockBackendUnavailableException")
    void silentListenerFailsReleaseWithinBound() throws Exception {
        CuttableClient cut = cuttableClient();
        Lease lease = hold(cut.client().lock(name()));
        cut.cut();

        assertReleaseFails(lease, "a cut connection");
    }

    @Test
    @DisplayName("silent listener: closing the client that holds a lease returns within 2 × timeout + slack")
    void silentListenerClientCloseWithinBound() throws Exception {
        CuttableClient cut = cuttableClient();
        hold(cut.client().lock(name()));
        cut.cut();

        assertClientCloseBounded(cut.client(), "a cut connection");
    }

    // ---- a host name that does not resolve

    @Test
    @DisplayName("unresolvable host (.invalid): connect, or the first tryLock, fails within its bound with LockBackendUnavailableException")
    void unresolvableHostFailsWithinBound() throws Exception {
        // RFC 6761: names under .invalid never resolve, on any resolver
        String host = "latchkey-contract-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1) + ".invalid";
        int port = contract().server().endpoints().get(0).getPort();
        assertConnectOrFirstTryLockFails(contract().server().uri(List.of(InetSocketAddress.createUnresolved(host, port))),
                "an unresolvable host");
    }

    // ---- a paused server

    @Test
    @DisplayName("paused server: connect, or the first tryLock, fails within its bound with LockBackendUnavailableException")
    void pausedServerFailsConnectWithinBound() throws Exception {
        String uri = contract().server().uri(contract().server().endpoints());
        paused(() -> assertConnectOrFirstTryLockFails(uri, "a paused server"));
    }

    @Test
    @DisplayName("paused server: tryLock of a connected client fails within wait + timeout + slack with LockBackendUnavailableException")
    void pausedServerFailsTryLockWithinBound() throws Exception {
        DistributedLock lock = client().lock(name());
        track(lock.tryLock(patientWait()).orElseThrow()).close(); // the connection works before the pause
        Duration wait = slack();

        paused(() -> {
            Future<Optional<Lease>> result = executor().submit(() -> lock.tryLock(wait));
            long start = System.nanoTime();
            assertThatThrownBy(() -> await(result, tryBound(wait).plus(timeout()), "tryLock on a paused server"))
                    .as("tryLock(%s) on a paused server", wait)
                    .isInstanceOf(LockBackendUnavailableException.class)
                    .hasMessageContaining(lock.name());
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("time until tryLock failed")
                    .isLessThanOrEqualTo(tryBound(wait));
        });
    }

    @Test
    @DisplayName("paused server: closing a lease fails within timeout + slack with LockBackendUnavailableException")
    void pausedServerFailsReleaseWithinBound() throws Exception {
        Lease lease = hold(client().lock(name()));

        paused(() -> assertReleaseFails(lease, "a paused server"));
    }

    @Test
    @DisplayName("paused server: closing the client that holds a lease returns within 2 × timeout + slack")
    void pausedServerClientCloseWithinBound() throws Exception {
        LockClient client = client();
        hold(client.lock(name()));

        paused(() -> assertClientCloseBounded(client, "a paused server"));
    }

    // ---- the client's own start-up is not charged to the server

    @Test
    @DisplayName("four JVMs connecting at once to a healthy server with timeout=2s all connect and take a lock")
    void fourJvmsConnectAtOnce() throws Exception {
        String uri = withTimeout(contract().childUri(), CONCURRENT_TIMEOUT);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<ChildHolder>> children = new ArrayList<>();
        for (int i = 0; i < CONCURRENT_JVMS; i++) {
            children.add(executor().submit(() -> {
                go.await();
                return track(ChildHolder.start(uri, contract().childJvmOptions()));
            }));
        }
        go.countDown();
        for (int i = 0; i < CONCURRENT_JVMS; i++) {
            // a child that could not connect answers "error ..." and start() fails, quoting it
            ChildHolder child = await(children.get(i), ChildHolder.STARTUP_GUARD, "child JVM " + i + " connecting");
            String lockName = name("child" + i);
            ChildHolder.Reply got = child.acquire(lockName, slack(), tryBound(slack()).plus(ChildHolder.STARTUP_GUARD));
            assertThat(got.kind()).as("child JVM %d's first acquire of a free lock with timeout=%s: %s", i,
                    CONCURRENT_TIMEOUT, got).isEqualTo("acquired");
        }
    }

    // ---- helpers

    /**
     * Connects with {@code uri} and the contract's options, and takes a lock: either {@code connect}
     * fails within {@code timeout + slack}, or it returns and {@code tryLock(slack)} fails within
     * {@code tryBound(slack)}; both with {@link LockBackendUnavailableException}.
     */
    private void assertConnectOrFirstTryLockFails(String uri, String fault) throws Exception {
        Duration wait = slack();
        String lockName = name();
        AtomicLong connectNanos = new AtomicLong(-1);
        AtomicLong tryLockStart = new AtomicLong(-1);
        Future<Optional<Lease>> result = executor().submit(() -> {
            long start = System.nanoTime();
            LockClient client;
            try {
                client = track(LockClient.connect(URI.create(uri), options()));
            } finally {
                connectNanos.set(System.nanoTime() - start);
            }
            tryLockStart.set(System.nanoTime());
            return client.lock(lockName).tryLock(wait);
        });
        Duration whole = timeout().plus(slack()).plus(tryBound(wait));

        assertThatThrownBy(() -> await(result, whole, "connect and tryLock on " + fault))
                .as("connect to %s, then tryLock(%s)", fault, wait)
                .isInstanceOf(LockBackendUnavailableException.class);
        long end = System.nanoTime();
        Duration connectTook = Duration.ofNanos(connectNanos.get());
        if (tryLockStart.get() < 0) {
            assertThat(connectTook).as("time until connect to %s failed", fault).isLessThanOrEqualTo(timeout().plus(slack()));
        } else {
            assertThat(connectTook).as("time connect to %s took before returning (lazy connect)", fault)
                    .isLessThanOrEqualTo(timeout().plus(slack()));
            assertThat(Duration.ofNanos(end - tryLockStart.get())).as("time until the first tryLock on %s failed", fault)
                    .isLessThanOrEqualTo(tryBound(wait));
        }
    }

    /** {@code lease.close()} fails with {@link LockBackendUnavailableException} within {@code timeout + slack}. */
    private void assertReleaseFails(Lease lease, String fault) throws Exception {
        boolean validBefore = lease.isValid(); // a lease lost before the fault is released quietly: say so
        Future<?> release = executor().submit(() -> {
            lease.close();
            return null;
        });
        Duration bound = timeout().plus(slack());
        long start = System.nanoTime();
        assertThatThrownBy(() -> await(release, bound.plus(timeout()), "closing a lease on " + fault))
                .as("closing a lease of lock '%s' (valid when the fault began: %s) on %s", lease.lockName(), validBefore, fault)
                .isInstanceOf(LockBackendUnavailableException.class)
                .hasMessageContaining(lease.lockName());
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("time until the release on %s failed", fault)
                .isLessThanOrEqualTo(bound);
    }

    /** {@code client.close()} with one lease held returns within {@code 2 × timeout + slack}, at most with LockBackendUnavailableException. */
    private void assertClientCloseBounded(LockClient client, String fault) throws Exception {
        Future<?> close = executor().submit(() -> {
            try {
                client.close();
            } catch (LockBackendUnavailableException e) {
                // acceptable: the release could not reach the server, and the lock expires on its own
            }
            return null;
        });
        Duration bound = timeout().multipliedBy(2).plus(slack());
        Duration took = timed(() -> await(close, bound.plus(timeout()), "closing a client on " + fault));
        assertThat(took).as("time closing a client that holds a lease on %s took", fault).isLessThanOrEqualTo(bound);
    }

    /** Runs {@code body} with the server paused, and thaws it whatever happens. */
    private void paused(Body body) throws Exception {
        LockServer server = contract().server();
        server.pause();
        try {
            body.run();
        } finally {
            server.unpause();
        }
    }

    @FunctionalInterface
    private interface Body {
        void run() throws Exception;
    }

    /** {@code uri} with its {@code timeout} query parameter set to {@code timeout}. */
    static String withTimeout(String uri, Duration timeout) {
        String value = "timeout=" + timeout.toMillis() + "ms";
        if (java.util.regex.Pattern.compile("[?&]timeout=").matcher(uri).find()) {
            return uri.replaceFirst("([?&])timeout=[^&]*", "$1" + value);
        }
        return uri + (uri.contains("?") ? "&" : "?") + value;
    }

    static InetSocketAddress closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), s.getLocalPort());
        }
    }
}
