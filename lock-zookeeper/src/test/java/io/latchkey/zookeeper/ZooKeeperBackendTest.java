package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.LockClients;
import io.latchkey.spi.LockUri;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What is particular to ZooKeeper: node layout and cleanup, no herd on release, ACLs, the own-client factory. */
class ZooKeeperBackendTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(6)).build();
    private static final Duration PATIENT = OPTIONS.lease().multipliedBy(4);
    /** The key under which this module's tests share one ZooKeeper server(). */
    static final String SERVER_KEY = "zookeeper";

    @RegisterExtension
    static final ZooKeeperFixture ZK = new ZooKeeperFixture();

    private static ZooKeeperServer server() {
        return ZK.server();
    }

    private static CuratorFramework raw() {
        return ZK.raw();
    }

    private LockClient client(String userInfoAndPath) {
        InetSocketAddress a = server().endpoints().get(0);
        String uri = "zookeeper://" + userInfoAndPath.replace("HOST", a.getHostString() + ":" + a.getPort());
        return ZK.track(LockClient.connect(URI.create(uri), OPTIONS));
    }

    /**
     * The parents of a read lock's node are containers the server deletes once empty ({@code <base>/@rw}
     * goes with the last read-write lock); one deleted while the client created the next is no failure
     * of the acquire. A second client deletes the empty containers as fast as it can while read locks
     * of new names are taken one after another, as the server's container manager does on its own
     * schedule: a container once it had a child and has none (seen once: a read lock refused at once
     * with {@code NoNode}).
     */
    @Test
    @DisplayName("containers deleted under an acquire as it creates its parents: every read lock is still granted")
    void parentContainersDeletedMeanwhileAreCreatedAgain() throws Exception {
        String base = "/race" + System.nanoTime();
        LockClient client = client("HOST" + base);
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger deleted = new java.util.concurrent.atomic.AtomicInteger();
        CompletableFuture<Void> deleter = CompletableFuture.runAsync(() -> {
            while (!stop.get()) {
                try {
                    for (String child : raw().getChildren().forPath(base + "/@rw")) {
                        deleteIfEmpty(base + "/@rw/" + child, deleted);
                    }
                    deleteIfEmpty(base + "/@rw", deleted);
                } catch (KeeperException.NoNodeException e) {
                    // gone already
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        });
        try {
            for (int i = 0; i < 200; i++) {
                try (Lease read = client.readWriteLock("race:" + i).readLock().lock(PATIENT)) {
                    assertThat(read.isValid()).isTrue();
                }
            }
        } finally {
            stop.set(true);
            deleter.get(PATIENT.toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(deleted.get()).as("containers the second client deleted").isPositive();
    }

    /** Deletes {@code path} as the container manager would: once it had a child and has none now. */
    private static void deleteIfEmpty(String path, java.util.concurrent.atomic.AtomicInteger deleted) throws Exception {
        try {
            Stat stat = raw().checkExists().forPath(path);
            if (stat != null && stat.getCversion() > 0 && stat.getNumChildren() == 0) {
                raw().delete().forPath(path);
                deleted.incrementAndGet();
            }
        } catch (KeeperException.NotEmptyException | KeeperException.NoNodeException e) {
            // in use, or gone already
        }
    }

    @Test
    @DisplayName("a held lock is an ephemeral node under a container node named by the encoded lock name;"
            + " after release both disappear")
    void releasedLockLeavesNoNodes() throws Exception {
        String name = "report:nightly/" + System.nanoTime();
        String lockPath = "/cleanup/" + LockPaths.nodeName(name);
        LockClient client = client("HOST/cleanup");
        Lease lease = client.lock(name).lock(PATIENT);

        Stat container = raw().checkExists().forPath(lockPath);
        assertThat(container).as("the lock name's node %s", lockPath).isNotNull();
        // the server hides a container's marker from clients (ephemeralOwner 0): its deletion below shows it
        List<String> children = raw().getChildren().forPath(lockPath);
        assertThat(children).hasSize(1);
        Stat node = raw().checkExists().forPath(lockPath + "/" + children.get(0));
        assertThat(node.getEphemeralOwner()).as("the lock node's owner session").isNotZero();
        assertThat(lease.fencingToken()).as("the fencing token is the lock node's czxid").isEqualTo(node.getCzxid());

        lease.close();

        Awaitility.await("the released lock's container node to be deleted")
                .atMost(ZooKeeperTestSupport.containerReapBound(OPTIONS.timeout())).pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(raw().checkExists().forPath(lockPath)).isNull());
        assertThat(raw().checkExists().forPath("/cleanup")).as("the base path stays").isNotNull();
        try (Lease again = client.lock(name).lock(PATIENT)) {
            assertThat(again.fencingToken()).as("a token after the container was deleted").isGreaterThan(lease.fencingToken());
        }
    }

    @Test
    @DisplayName("a lock node deleted behind the holder's back right after the grant ends its lease at the session's"
            + " first probe, a quarter of the session timeout later at most: lost() completes")
    void deletedLockNodeIsSignalled() throws Exception {
        String name = "deleted-" + System.nanoTime();
        String lockPath = LockPaths.DEFAULT_BASE + "/" + LockPaths.nodeName(name);
        LockClient client = client("HOST");
        Lease lease = client.lock(name).lock(PATIENT);
        String node = lockPath + "/" + raw().getChildren().forPath(lockPath).get(0);

        raw().delete().forPath(node);

        // the probe's first tick sets the watch on the node, a quarter of the session (at most the lease) after the grant
        LockException lost = lease.lost().toCompletableFuture().get(OPTIONS.lease().dividedBy(4).plus(OPTIONS.timeout())
                .toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lost).hasMessageContaining(node).hasMessageContaining("deleted");
        assertThat(lease.isValid()).isFalse();
        lease.close();
        try (Lease next = client("HOST").lock(name).lock(PATIENT)) {
            assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        }
    }

    @Test
    @DisplayName("the warning at a suspended connection names at most 10 leases and counts the rest")
    void suspendedWarningNamesTenLeases() {
        List<String> ten = java.util.stream.IntStream.range(0, 10).mapToObj(i -> "lock 'n" + i + "'").toList();
        assertThat(ZooKeeperBackend.listed(ten)).isEqualTo(String.join(", ", ten));
        List<String> many = java.util.stream.IntStream.range(0, 10_000).mapToObj(i -> "lock 'n" + i + "'").toList();
        assertThat(ZooKeeperBackend.listed(many)).isEqualTo(String.join(", ", ten) + " and 9990 more");
        assertThat(ZooKeeperBackend.listed(List.of())).isEmpty();
    }

    @Test
    @DisplayName("Latchkey's read-write locks and Curator's InterProcessReadWriteLock on the same path: readers share, writers exclude")
    void curatorReadWriteLockOnTheSamePath() throws Exception {
        String name = "curator-rw-" + System.nanoTime();
        String path = LockPaths.DEFAULT_BASE + "/" + LockPaths.READ_WRITE + "/" + LockPaths.nodeName(name);
        LockClient client = client("HOST");
        var ours = client.readWriteLock(name);
        var curator = new org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock(raw(), path);
        assertThat(curator.writeLock().acquire(PATIENT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        try {
            assertThat(ours.readLock().tryLock(Duration.ZERO)).as("our read while Curator writes").isEmpty();
            assertThat(ours.writeLock().tryLock(Duration.ZERO)).as("our write while Curator writes").isEmpty();
        } finally {
            curator.writeLock().release();
        }
        try (Lease write = ours.writeLock().lock(PATIENT)) {
            assertThat(curator.readLock().acquire(0, TimeUnit.MILLISECONDS)).as("Curator's read while we write").isFalse();
            assertThat(curator.writeLock().acquire(0, TimeUnit.MILLISECONDS)).as("Curator's write while we write").isFalse();
            assertThat(write.isValid()).isTrue();
        }
        try (Lease read = ours.readLock().lock(PATIENT)) {
            assertThat(curator.readLock().acquire(PATIENT.toMillis(), TimeUnit.MILLISECONDS)).as("Curator's read beside ours")
                    .isTrue();
            curator.readLock().release();
            assertThat(curator.writeLock().acquire(0, TimeUnit.MILLISECONDS)).as("Curator's write while we read").isFalse();
            assertThat(read.isValid()).isTrue();
        }
        assertThat(curator.readLock().acquire(PATIENT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        try {
            try (Lease read = ours.readLock().lock(Duration.ZERO)) {
                assertThat(read.isValid()).as("our read beside Curator's").isTrue();
            }
            assertThat(ours.writeLock().tryLock(Duration.ZERO)).as("our write while Curator reads").isEmpty();
        } finally {
            curator.readLock().release();
        }
    }

    @Test
    @DisplayName("Latchkey's locks and plain Curator InterProcessMutex on the same path exclude each other")
    void curatorMutexOnTheSamePathExcludes() throws Exception {
        String name = "curator-" + System.nanoTime();
        String lockPath = LockPaths.DEFAULT_BASE + "/" + LockPaths.nodeName(name);
        LockClient client = client("HOST");
        org.apache.curator.framework.recipes.locks.InterProcessMutex mutex =
                new org.apache.curator.framework.recipes.locks.InterProcessMutex(raw(), lockPath);
        assertThat(mutex.acquire(PATIENT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        try {
            assertThat(client.lock(name).tryLock(Duration.ZERO)).as("Latchkey while Curator holds it").isEmpty();
        } finally {
            mutex.release();
        }
        try (Lease lease = client.lock(name).lock(PATIENT)) {
            assertThat(mutex.acquire(0, TimeUnit.MILLISECONDS)).as("Curator while Latchkey holds it").isFalse();
            CompletableFuture<Boolean> curatorWaits = CompletableFuture.supplyAsync(() -> {
                try {
                    boolean got = mutex.acquire(PATIENT.toMillis(), TimeUnit.MILLISECONDS);
                    if (got) {
                        mutex.release();
                    }
                    return got;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            Awaitility.await("Curator's waiter to queue").atMost(PATIENT)
                    .until(() -> raw().getChildren().forPath(lockPath).size() == 2);
            lease.close();
            assertThat(curatorWaits.get(PATIENT.toMillis(), TimeUnit.MILLISECONDS)).as("Curator after Latchkey released")
                    .isTrue();
        }
    }

    @Test
    @DisplayName("herd: with 20 waiters in 20 clients, each release wakes only the next waiter, in FIFO order")
    void releaseWakesOnlyTheNextWaiter() throws Exception {
        int waiters = 20;
        String name = "herd-" + System.nanoTime();
        String lockPath = LockPaths.DEFAULT_BASE + "/" + LockPaths.nodeName(name);
        LockClient holderClient = client("HOST");
        Lease current = holderClient.lock(name).lock(PATIENT);

        List<ZooKeeperBackend> backends = new ArrayList<>();
        List<CompletableFuture<Optional<Lease>>> grants = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            ZooKeeperBackend backend = (ZooKeeperBackend) new ZooKeeperLockProvider().connect(lockUri(), OPTIONS);
            LockClient c = LockClients.of("zookeeper", backend, OPTIONS);
            ZK.track(c);
            backends.add(backend);
            grants.add(c.lock(name).tryLockAsync(PATIENT.multipliedBy(2)));
            int queued = i + 2;
            // one waiter at a time, so that arrival order is known
            Awaitility.await("waiter " + i + " to queue").atMost(PATIENT).pollInterval(Duration.ofMillis(20))
                    .until(() -> raw().getChildren().forPath(lockPath).size() == queued && backend.childrenReads.sum() == 1);
        }

        for (int k = 0; k < waiters; k++) {
            for (int j = k; j < waiters; j++) {
                assertThat(backends.get(j).childrenReads.sum()).as("children reads of waiter %d before release %d", j, k)
                        .isEqualTo(1);
                assertThat(grants.get(j)).as("waiter %d before release %d", j, k).isNotDone();
            }
            current.close();
            Optional<Lease> next = grants.get(k).get(PATIENT.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(next).as("waiter %d after release %d", k, k).isPresent();
            current = next.get();
            assertThat(backends.get(k).childrenReads.sum()).as("children reads of the woken waiter %d", k).isEqualTo(2);
        }
        current.close();
        for (int j = 0; j < waiters; j++) {
            assertThat(backends.get(j).childrenReads.sum()).as("children reads of waiter %d in all", j).isEqualTo(2);
        }
    }

    @Test
    @DisplayName("with credentials, lock nodes get a digest ACL: a client without them can neither create nor delete"
            + " lock nodes, and the library tells it so")
    void clientWithoutCredentialsIsRefused() throws Exception {
        String name = "secret:" + System.nanoTime();
        String lockPath = "/secured/" + LockPaths.nodeName(name);
        LockClient owner = client("alice:s3cret@HOST/secured");
        Lease lease = owner.lock(name).lock(PATIENT);
        String node;
        try (CuratorFramework alice = ZooKeeperTestSupport.rawClient(server().connectString(), "alice:s3cret")) {
            node = lockPath + "/" + alice.getChildren().forPath(lockPath).get(0);
        }

        assertThatThrownBy(() -> raw().delete().forPath(node)).as("delete of the lock node without credentials")
                .isInstanceOf(KeeperException.NoAuthException.class);
        assertThatThrownBy(() -> raw().create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(lockPath + "/x-lock-"))
                .as("a lock node created without credentials").isInstanceOf(KeeperException.NoAuthException.class);
        assertThatThrownBy(() -> raw().create().forPath("/secured/other"))
                .as("a lock name's node created without credentials").isInstanceOf(KeeperException.NoAuthException.class);

        InetSocketAddress a = server().endpoints().get(0);
        for (String intruder : List.of("", "alice:wrong@")) {
            String uri = "zookeeper://" + intruder + a.getHostString() + ":" + a.getPort() + "/secured";
            assertThatThrownBy(() -> client(intruder + "HOST/secured")).as("connecting with %s", uri)
                    .isInstanceOf(LockException.class)
                    .hasMessageContaining("not allowed to use the zookeeper base path '/secured'")
                    .hasMessageContaining("username and password");
        }
        // a client that was let in before the base path was protected meets the ACL at the lock itself
        String open = "open-then-closed-" + System.nanoTime();
        LockClient early = client("HOST/" + open);
        raw().setACL().withACL(ZooKeeperLockProvider.acl(LockOptions.builder().credentials("alice", "s3cret").build()))
                .forPath("/" + open);
        assertThatThrownBy(() -> early.lock(name).tryLock(PATIENT)).as("tryLock under a base path protected meanwhile")
                .isInstanceOf(LockException.class)
                .hasMessageContaining("not allowed to acquire lock '" + name + "'")
                .hasMessageContaining("/" + open + "/" + LockPaths.nodeName(name))
                .hasMessageContaining("username and password");
        assertThat(lease.isValid()).as("the owner's lease after the refused attempts").isTrue();

        LockClient colleague = client("alice:s3cret@HOST/secured");
        CompletableFuture<Optional<Lease>> waiting = colleague.lock(name).tryLockAsync(PATIENT);
        lease.close();
        Optional<Lease> next = waiting.get(PATIENT.toMillis() * 2, TimeUnit.MILLISECONDS);
        assertThat(next).as("a client with the credentials after the owner released").isPresent();
        next.get().close();
    }

    @Test
    @DisplayName("the URI's path and the namespace option place the lock nodes, and the session timeout is the lease minus"
            + " a tick")
    void uriPathNamespaceAndLease() throws Exception {
        String name = "placed:" + System.nanoTime();
        LockClient c = client("HOST/base/path?lease=8s&namespace=team");
        assertThat(c.options().lease()).isEqualTo(Duration.ofSeconds(8));
        long before = System.nanoTime();
        try (Lease lease = c.lock(name).lock(PATIENT)) {
            Duration remaining = lease.remaining();
            Duration since = Duration.ofNanos(System.nanoTime() - before);
            String lockPath = "/team/base/path/" + LockPaths.nodeName(name);
            assertThat(raw().getChildren().forPath(lockPath)).as("lock nodes under %s", lockPath).hasSize(1);
            Duration session = c.options().lease().minus(ZooKeeperTestSupport.tick(server()));
            assertThat(server().fourLetterWord("cons")).as("the sessions the server knows: the lease minus a tick")
                    .contains("to=" + session.toMillis());
            // the evidence was sent after 'before' and counts that session minus the margin from there
            Duration validFor = session.minus(c.options().safetyMargin());
            assertThat(remaining).as("validity from an 8 s session").isLessThanOrEqualTo(validFor)
                    .isGreaterThanOrEqualTo(validFor.minus(since));
        }
        assertThatThrownBy(() -> client("alice@HOST")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("zookeeper user 'alice' has no password");
    }

    @Test
    @DisplayName("a client on the application's own Curator client locks and does not close that client")
    void ownCuratorClientIsNotClosed() throws Exception {
        Duration session = OPTIONS.lease().minus(ZooKeeperTestSupport.tick(server()));
        try (CuratorFramework own = ZooKeeperTestSupport.rawClientWithSession(server().connectString(), session)) {
            String name = "own-" + System.nanoTime();
            LockClient c = ZooKeeperLockProvider.client(own, "/own", OPTIONS);
            try (Lease lease = c.lock(name).lock(PATIENT)) {
                assertThat(own.getChildren().forPath("/own/" + LockPaths.nodeName(name))).hasSize(1);
                assertThat(lease.isValid()).isTrue();
            }
            c.close();
            assertThat(own.getZookeeperClient().isConnected()).as("the application's client after close").isTrue();
            assertThat(own.checkExists().forPath("/own")).isNotNull();
        }
    }

    private static LockUri lockUri() {
        InetSocketAddress a = server().endpoints().get(0);
        return new LockUri("zookeeper", List.of(new LockUri.HostAndPort(a.getHostString(), a.getPort())), "",
                server().uri(server().endpoints()));
    }
}
