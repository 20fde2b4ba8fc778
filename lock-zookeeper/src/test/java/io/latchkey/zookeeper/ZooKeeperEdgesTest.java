package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockLostException;
import io.latchkey.LockOptions;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.OptionsUri;
import io.latchkey.testkit.fault.TcpProxy;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ZooKeeper at the edges: bounded connects with advice that fits the cause, the lease measured
 * against the server's tick, waiters whose session or whose holder's session expired, the own-client
 * factory's lease, and schedule slots fenced in the lock's node. Bounds derive from the options and
 * the server's tick ({@link ZooKeeperServer}: 500 ms) plus a slack of half the timeout, as in the kit.
 */
class ZooKeeperEdgesTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(3))
            .timeout(Duration.ofSeconds(1)).build();
    private static final Duration SLACK = OPTIONS.timeout().dividedBy(2).compareTo(OPTIONS.safetyMargin()) > 0
            ? OPTIONS.timeout().dividedBy(2) : OPTIONS.safetyMargin();
    /** How long the server may take past a session's timeout to expire it: one tick, learnt as the kit sets it. */
    private static Duration tick;

    @RegisterExtension
    static final SharedServer<ZooKeeperServer> ZOOKEEPER = SharedServer.of(ZooKeeperBackendTest.SERVER_KEY,
            ZooKeeperServer::start);
    private static ZooKeeperServer server;
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeAll
    static void learnTick() throws Exception {
        server = ZOOKEEPER.get();
        InetSocketAddress a = server.endpoints().get(0);
        tick = ServerProbe.probe(List.of(new io.latchkey.spi.LockUri.HostAndPort(a.getHostString(), a.getPort())),
                io.latchkey.spi.Deadline.after(OPTIONS.timeout())).tick();
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeAfter.size() - 1; i >= 0; i--) {
            closeAfter.get(i).close();
        }
    }

    private <T extends AutoCloseable> T later(T c) {
        closeAfter.add(c);
        return c;
    }

    private LockClient client(LockOptions options) {
        return later(LockClient.connect(URI.create(server.uri(server.endpoints())), options));
    }

    private static String childUri(LockOptions options) {
        return OptionsUri.of(server.uri(server.endpoints()), options);
    }

    // ---- item 1: connect within timeout, with advice that fits the cause ----

    @Test
    @DisplayName("connect to a listener that accepts TCP and never answers fails within timeout, saying the server"
            + " sent no handshake")
    void silentListener() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            assertConnectFails("zookeeper://127.0.0.1:" + silent.getLocalPort(), "sent no zookeeper handshake");
        }
    }

    @Test
    @DisplayName("connect to a refused port fails within timeout, saying nothing listens there, without advice to"
            + " raise the timeout")
    void refusedPort() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        LockBackendUnavailableException e = assertConnectFails("zookeeper://127.0.0.1:" + port, "refused the connection");
        assertThat(e.getMessage()).doesNotContain("raise the timeout");
    }

    @Test
    @DisplayName("connect to an unresolvable host fails within timeout, naming the host")
    void unresolvableHost() {
        assertConnectFails("zookeeper://no-such-host.invalid:2181", "host 'no-such-host.invalid' cannot be resolved");
    }

    @Test
    @DisplayName("connect to a server that answers the handshake probe late and then stops answering fails within"
            + " timeout, not a second timeout later")
    void serverFreezesAfterTheProbe() throws Exception {
        // this JVM has built and started a Curator client before: its own start-up is not the server's time
        LockClient.connect(URI.create(server.uri(server.endpoints())), OPTIONS).close();
        Duration probeAnswerDelay = OPTIONS.timeout().dividedBy(2); // late, but well within the timeout
        try (FreezesAfterFirstConnection proxy = new FreezesAfterFirstConnection(server.endpoints().get(0),
                probeAnswerDelay)) {
            assertConnectFails("zookeeper://127.0.0.1:" + proxy.port(), "although the server answered a handshake");
            assertThat(proxy.accepted()).as("connections: the probe's, then Curator's").isGreaterThanOrEqualTo(2);
        }
    }

    private static LockBackendUnavailableException assertConnectFails(String uri, String reason) {
        long start = System.nanoTime();
        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(() -> LockClient.connect(URI.create(uri), OPTIONS));
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(thrown).isInstanceOf(LockBackendUnavailableException.class).hasMessageContaining(reason)
                .hasMessageContaining("timeout option (1s)");
        assertThat(thrown.getMessage().split(java.util.regex.Pattern.quote(uri), -1)).as("the URI, quoted once").hasSize(2);
        assertThat(took).as("connect to %s", uri).isLessThanOrEqualTo(OPTIONS.timeout().plus(SLACK));
        return (LockBackendUnavailableException) thrown;
    }

    // ---- items 4 and 5: the lease against the server's tick ----

    @Test
    @DisplayName("the session asked for is the lease minus one tick; a lease below the minimum session plus a tick,"
            + " or not longer than timeout plus margin, is refused at connect naming the minimum")
    void leaseAgainstTheTick() throws Exception {
        assertThat(tick).as("the tick learnt from the minimum session timeout").isEqualTo(Duration.ofMillis(500));
        LockClient c = client(OPTIONS);
        try (Lease lease = c.lock("tick-" + System.nanoTime()).lock(OPTIONS.lease())) {
            assertThat(server.fourLetterWord("cons")).contains("to=" + OPTIONS.lease().minus(tick).toMillis());
            assertThat(lease.remaining()).isLessThanOrEqualTo(OPTIONS.lease().minus(tick).minus(OPTIONS.safetyMargin()));
        }
        Duration shortest = tick.multipliedBy(3);
        LockOptions tooShort = LockOptions.builder().lease(shortest.minusMillis(1)).timeout(Duration.ofMillis(500))
                .safetyMargin(Duration.ofMillis(100)).build();
        assertThatThrownBy(() -> client(tooShort)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease=1499ms").hasMessageContaining("the shortest lease it keeps is 1500ms");
        LockOptions belowTimeout = LockOptions.builder().lease(Duration.ofSeconds(2)).timeout(Duration.ofSeconds(2)).build();
        assertThatThrownBy(() -> client(belowTimeout)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease=2s").hasMessageContaining("longer than timeout=2s plus safetyMargin=200ms (2200ms)");
    }

    @Test
    @DisplayName("a killed holder's lock is free within lease plus the waiter's wake-up")
    void crashFailoverWithinLease() throws Exception {
        String name = "crash-" + System.nanoTime();
        LockClient waiter = client(OPTIONS);
        List<Duration> measured = new ArrayList<>();
        for (int run = 0; run < 3; run++) {
            try (ChildHolder holder = ChildHolder.start(childUri(OPTIONS))) {
                assertThat(holder.acquire(name, Duration.ZERO, ChildHolder.STARTUP_GUARD).kind()).isEqualTo("acquired");
                CompletableFuture<Optional<Lease>> next = waiter.lock(name).tryLockAsync(OPTIONS.lease().multipliedBy(3));
                long killedAt = System.nanoTime();
                holder.kill();
                Lease lease = next.get(OPTIONS.lease().multipliedBy(4).toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
                measured.add(Duration.ofNanos(System.nanoTime() - killedAt));
                lease.close();
            }
        }
        System.err.println("crash failover with lease " + OPTIONS.lease() + ": " + measured);
        assertThat(measured).allSatisfy(d -> assertThat(d).isLessThanOrEqualTo(OPTIONS.lease().plusMillis(250)));
    }

    // ---- item 3: expired sessions while waiting ----

    @Test
    @DisplayName("a waiter whose holder's session expires (holder stopped past its session) is granted the lock"
            + " within its wait, and the holder learns of its loss on waking")
    void holderSessionExpiresWhileWaiting() throws Exception {
        String name = "holder-expired-" + System.nanoTime();
        LockClient waiter = client(OPTIONS);
        for (int run = 0; run < 3; run++) {
            try (ChildHolder holder = ChildHolder.start(childUri(OPTIONS))) {
                assertThat(holder.acquire(name, Duration.ZERO, ChildHolder.STARTUP_GUARD).kind()).isEqualTo("acquired");
                Duration wait = OPTIONS.lease().multipliedBy(3);
                CompletableFuture<Optional<Lease>> next = waiter.lock(name).tryLockAsync(wait);
                holder.pause();
                long pausedAt = System.nanoTime();
                Optional<Lease> got = next.get(wait.plus(OPTIONS.timeout()).plus(SLACK).toMillis(), TimeUnit.MILLISECONDS);
                assertThat(got).as("run %d: the waiter after the holder's session expired", run).isPresent();
                assertThat(Duration.ofNanos(System.nanoTime() - pausedAt)).isLessThanOrEqualTo(OPTIONS.lease().plus(SLACK));
                assertThat(got.get().isValid()).isTrue();
                holder.resume();
                assertThat(holder.request("await-lost " + OPTIONS.lease().toMillis(), OPTIONS.lease().plus(SLACK)).argument())
                        .as("the resumed holder's loss").isEqualTo("true");
                got.get().close();
            }
        }
    }

    @Test
    @DisplayName("a waiter stopped past its own session queues again on waking and is granted the lock within its wait")
    void waiterSessionExpiresWhileWaiting() throws Exception {
        String name = "waiter-expired-" + System.nanoTime();
        String lockPath = LockPaths.DEFAULT_BASE + "/" + LockPaths.nodeName(name);
        LockClient holder = client(OPTIONS);
        try (CuratorFramework raw = ZooKeeperTestSupport.rawClient(server.connectString())) {
            for (int run = 0; run < 2; run++) {
                Lease held = holder.lock(name).lock(OPTIONS.lease());
                String holderNode = raw.getChildren().forPath(lockPath).get(0);
                try (ChildHolder waiter = ChildHolder.start(childUri(OPTIONS))) {
                    Duration wait = OPTIONS.lease().multipliedBy(6);
                    waiter.send("acquire " + wait.toMillis() + " " + name);
                    String waiterNode = awaitOtherNode(raw, lockPath, holderNode, null, ChildHolder.STARTUP_GUARD);
                    waiter.pause();
                    // the waiter's session expires while it is stopped: the server deletes its node with it
                    org.awaitility.Awaitility.await("run " + run + ": the stopped waiter's node to go with its session")
                            .atMost(OPTIONS.lease().plus(tick).plus(SLACK)).pollInterval(Duration.ofMillis(50))
                            .until(() -> !raw.getChildren().forPath(lockPath).contains(waiterNode));
                    waiter.resume();
                    // on waking it queues again, in a new session, with a new node
                    awaitOtherNode(raw, lockPath, holderNode, waiterNode, wait);
                    held.close();
                    ChildHolder.Reply reply = waiter.next(wait);
                    assertThat(reply.kind()).as("run %d: the waiter after its own session expired: %s", run, reply)
                            .isEqualTo("acquired");
                    waiter.request("release", OPTIONS.timeout().plus(SLACK));
                }
            }
        }
    }

    @Test
    @DisplayName("a waiter cut off past its own session queues again once it reaches the server, in a new session,"
            + " and is granted the lock within its wait")
    void waiterCutOffPastItsSession() throws Exception {
        String name = "waiter-cut-" + System.nanoTime();
        String lockPath = LockPaths.DEFAULT_BASE + "/" + LockPaths.nodeName(name);
        LockClient holder = client(OPTIONS);
        try (TcpProxy proxy = TcpProxy.start(server.endpoints().get(0));
                CuratorFramework raw = ZooKeeperTestSupport.rawClient(server.connectString())) {
            LockClient waiter = later(LockClient.connect(URI.create(server.uri(List.of(proxy.endpoint()))), OPTIONS));
            Lease held = holder.lock(name).lock(OPTIONS.lease());
            String holderNode = raw.getChildren().forPath(lockPath).get(0);
            Duration wait = OPTIONS.lease().multipliedBy(6);
            CompletableFuture<Optional<Lease>> next = waiter.lock(name).tryLockAsync(wait);
            String waiterNode = awaitOtherNode(raw, lockPath, holderNode, null, wait);
            proxy.cut();
            org.awaitility.Awaitility.await("the cut waiter's node to go with its session")
                    .atMost(OPTIONS.lease().plus(tick).plus(SLACK)).pollInterval(Duration.ofMillis(50))
                    .until(() -> !raw.getChildren().forPath(lockPath).contains(waiterNode));
            proxy.restore();
            awaitOtherNode(raw, lockPath, holderNode, waiterNode, wait);
            assertThat(next).as("the waiter while the lock is held").isNotDone();
            held.close();
            Optional<Lease> got = next.get(wait.plus(OPTIONS.timeout()).plus(SLACK).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(got).as("the waiter after its own session expired").isPresent();
            assertThat(got.get().isValid()).isTrue();
            got.get().close();
        }
    }

    /** Waits for a lock node other than {@code holderNode} and {@code old} under {@code lockPath}, and returns it. */
    private static String awaitOtherNode(CuratorFramework raw, String lockPath, String holderNode, String old,
            Duration bound) {
        java.util.concurrent.atomic.AtomicReference<String> found = new java.util.concurrent.atomic.AtomicReference<>();
        org.awaitility.Awaitility.await("a waiter's node under " + lockPath).atMost(bound)
                .pollInterval(Duration.ofMillis(50)).until(() -> {
                    for (String child : raw.getChildren().forPath(lockPath)) {
                        if (!child.equals(holderNode) && !child.equals(old) && !child.equals(SlotRecord.NODE)) {
                            found.set(child);
                            return true;
                        }
                    }
                    return false;
                });
        return found.get();
    }

    // ---- item 5: the application's Curator client ----

    @Test
    @DisplayName("on the application's Curator client, a lease shorter than its session timeout plus a tick is refused"
            + " naming both; the lease, namespace and timeout otherwise apply")
    void ownCuratorLease() throws Exception {
        try (CuratorFramework longSession = curator(10_000)) {
            assertThatThrownBy(() -> ZooKeeperLockProvider.client(longSession, "/own-edges", OPTIONS))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease=3s")
                    .hasMessageContaining("session timeout is 10s").hasMessageContaining("10500ms");
            assertThat(longSession.getZookeeperClient().isConnected()).isTrue();
        }
        try (CuratorFramework fitting = curator(OPTIONS.lease().minus(tick).toMillis())) {
            LockOptions withNamespace = LockOptions.builder().lease(OPTIONS.lease()).timeout(OPTIONS.timeout())
                    .namespace("team").build();
            LockClient c = ZooKeeperLockProvider.client(fitting, "/own-edges", withNamespace);
            String name = "own-" + System.nanoTime();
            try (Lease lease = c.lock(name).lock(OPTIONS.lease())) {
                assertThat(fitting.getChildren().forPath("/team/own-edges/" + LockPaths.nodeName(name))).hasSize(1);
                assertThat(lease.remaining()).isLessThanOrEqualTo(OPTIONS.lease().minus(tick).minus(OPTIONS.safetyMargin()));
            }
            c.close();
        }
    }

    private static CuratorFramework curator(long sessionMs) {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(server.connectString())
                .sessionTimeoutMs((int) sessionMs).connectionTimeoutMs(5_000).retryPolicy(new RetryOneTime(100))
                .ensembleTracker(false).build();
        c.start();
        return c;
    }

    // ---- once per slot ----

    @Test
    @DisplayName("once per slot: the slot is recorded in the lock's node, a later acquirer of the same slot skips,"
            + " and a holder whose lock node is gone cannot record")
    void oncePerSlot() throws Exception {
        String name = "slot-" + System.nanoTime();
        Instant slot = Instant.parse("2030-01-01T00:00:00Z");
        LockClient a = client(OPTIONS);
        LockClient b = client(OPTIONS);
        io.latchkey.LockRequest request = io.latchkey.LockRequest.builder().wait(OPTIONS.lease()).slot(slot).build();
        assertThat(a.lock(name).runLocked(request, lease -> { }).ran()).isTrue();
        var second = b.lock(name).runLocked(request, lease -> { });
        assertThat(second.ran()).as("the same slot on another client").isFalse();
        assertThat(b.lock(name).runLocked(io.latchkey.LockRequest.builder().wait(OPTIONS.lease())
                .slot(slot.plusSeconds(60)).build(), lease -> { }).ran()).as("the next slot").isTrue();
        try (CuratorFramework raw = ZooKeeperTestSupport.rawClient(server.connectString())) {
            String lockPath = LockPaths.DEFAULT_BASE + "/" + LockPaths.nodeName(name);
            assertThat(new String(raw.getData().forPath(lockPath + "/" + SlotRecord.NODE))).endsWith(" " + slot.plusSeconds(60));
            ZooKeeperBackend backend = (ZooKeeperBackend) new ZooKeeperLockProvider().connect(lockUri(), OPTIONS);
            try {
                ZooKeeperLease lease = (ZooKeeperLease) backend.acquire(name, io.latchkey.spi.Deadline.after(OPTIONS.lease()),
                        new NoEvidence());
                String node = raw.getChildren().forPath(lockPath).stream().filter(n -> !n.equals(SlotRecord.NODE))
                        .findFirst().orElseThrow();
                raw.delete().forPath(lockPath + "/" + node);
                assertThatThrownBy(() -> lease.recordCompletedSlot(slot.plusSeconds(120)))
                        .isInstanceOf(LockLostException.class).hasMessageContaining("no longer exists");
                assertThat(lease.lastCompletedSlot()).contains(slot.plusSeconds(60));
                lease.release();
            } finally {
                backend.close();
            }
        }
    }

    private static io.latchkey.spi.LockUri lockUri() {
        InetSocketAddress a = server.endpoints().get(0);
        return new io.latchkey.spi.LockUri("zookeeper", List.of(new io.latchkey.spi.LockUri.HostAndPort(a.getHostString(),
                a.getPort())), "", server.uri(server.endpoints()));
    }

    private static final class NoEvidence implements io.latchkey.spi.LeaseEvidence {
        @Override
        public void confirmed(long sentAtNanos, Duration serverTtl) {
        }

        @Override
        public void lost(String reason, Throwable cause) {
        }
    }


    /**
     * A listener that forwards its first connection to the server, holding the server's first answer
     * back by a delay, and accepts every later connection without forwarding or answering anything: a
     * server that answers the probe and then freezes.
     */
    private static final class FreezesAfterFirstConnection implements AutoCloseable {
        private final ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        private final List<java.net.Socket> sockets = java.util.Collections.synchronizedList(new ArrayList<>());
        private final java.util.concurrent.atomic.AtomicInteger accepted = new java.util.concurrent.atomic.AtomicInteger();

        FreezesAfterFirstConnection(InetSocketAddress target, Duration firstAnswerDelay) throws java.io.IOException {
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        java.net.Socket in = listener.accept();
                        sockets.add(in);
                        if (accepted.incrementAndGet() == 1) {
                            java.net.Socket out = new java.net.Socket(target.getHostString(), target.getPort());
                            sockets.add(out);
                            pump(in, out, Duration.ZERO);
                            pump(out, in, firstAnswerDelay);
                        } else {
                            pump(in, null, Duration.ZERO); // read and drop: never an answer
                        }
                    }
                } catch (java.io.IOException e) {
                    // closed
                }
            }, "freezes-after-first-connection");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        private static void pump(java.net.Socket from, java.net.Socket to, Duration firstDelay) {
            Thread t = new Thread(() -> {
                byte[] buffer = new byte[8192];
                boolean first = true;
                try {
                    int n;
                    while ((n = from.getInputStream().read(buffer)) >= 0) {
                        if (first && !firstDelay.isZero()) {
                            Thread.sleep(firstDelay.toMillis()); // the fault itself: a slow answer
                        }
                        first = false;
                        if (to != null) {
                            to.getOutputStream().write(buffer, 0, n);
                        }
                    }
                } catch (java.io.IOException | InterruptedException e) {
                    // closed
                }
            }, "freezes-after-first-connection-pump");
            t.setDaemon(true);
            t.start();
        }

        int port() {
            return listener.getLocalPort();
        }

        int accepted() {
            return accepted.get();
        }

        @Override
        public void close() throws java.io.IOException {
            listener.close();
            synchronized (sockets) {
                for (java.net.Socket s : sockets) {
                    s.close();
                }
            }
        }
    }
}
