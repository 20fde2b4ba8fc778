package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.DistributedLock;
import io.latchkey.DistributedSemaphore;
import io.latchkey.GrantTime;
import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.LockState;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.fault.TcpProxy;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.data.Stat;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Who holds a lock, on ZooKeeper: the holder text is the lock node's data, as any client reads it,
 * and {@code inspect} reads it back with the node's {@code czxid} as the token, creating nothing. Bounds
 * come from the options: an answer within {@code timeout}, plus a slack of half the timeout or the
 * safety margin, as in the kit. A semaphore's inspect reads its slot nodes the same way.
 */
class ZooKeeperInspectTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(3))
            .timeout(Duration.ofSeconds(1)).build();
    private static final Duration SLACK = OPTIONS.timeout().dividedBy(2).compareTo(OPTIONS.safetyMargin()) > 0
            ? OPTIONS.timeout().dividedBy(2) : OPTIONS.safetyMargin();
    private static final Duration PATIENT = OPTIONS.lease().multipliedBy(4);

    @RegisterExtension
    static final ZooKeeperFixture ZK = new ZooKeeperFixture();

    private static ZooKeeperServer server() {
        return ZK.server();
    }

    private static CuratorFramework raw() {
        return ZK.raw();
    }

    private LockClient client(String owner) {
        return client(owner, server().uri(server().endpoints()));
    }

    private LockClient client(String owner, String uri) {
        return ZK.track(LockClient.connect(URI.create(uri), OPTIONS.toBuilder().owner(owner).build()));
    }

    private static String lockPath(String name) {
        return LockPaths.DEFAULT_BASE + "/" + LockPaths.nodeName(name);
    }

    @Test
    @DisplayName("the lock node's data, read with a plain ZooKeeper client, is the holder: owner, client start, thread;"
            + " inspect by another client reads it with the lease's token and no expiry, a write lock's as well")
    void lockNodeDataIsTheHolder() throws Exception {
        String name = "holder:" + System.nanoTime();
        Instant before = Instant.now();
        LockClient holder = client("web-1:4242");
        try (Lease lease = holder.lock(name).lock(PATIENT)) {
            List<String> children = raw().getChildren().forPath(lockPath(name));
            assertThat(children).hasSize(1);
            Stat stat = new Stat();
            String data = new String(raw().getData().storingStatIn(stat).forPath(lockPath(name) + "/" + children.get(0)),
                    StandardCharsets.UTF_8);
            Holder written = Holder.parse(data).orElseThrow(() -> new AssertionError("no holder text: '" + data + "'"));
            assertThat(written.owner()).as("the owner in %s", data).isEqualTo("web-1:4242");
            assertThat(written.thread()).as("the thread in %s", data).isEqualTo(Thread.currentThread().getName());
            assertThat(written.clientStarted()).as("the client's start in %s", data).isBetween(before, Instant.now());
            assertThat(lease.fencingToken()).as("the lease's token: the node's czxid").isEqualTo(stat.getCzxid());

            LockState state = client("observer").lock(name).inspect();
            assertThat(state.holder()).as("the holder inspect reads").hasValue(written);
            assertThat(state.token()).as("the token inspect reads").hasValue(lease.fencingToken());
            assertThat(state.expiresIn()).as("another session's remaining time: ZooKeeper does not tell it").isEmpty();
            assertThat(state.since()).as("the node's ctime, when the server queued the request")
                    .hasValue(new GrantTime(Instant.ofEpochMilli(stat.getCtime()), GrantTime.Source.BACKEND_AT_REQUEST));
        }
        try (Lease write = holder.readWriteLock(name).writeLock().lock(PATIENT)) {
            String rwPath = LockPaths.DEFAULT_BASE + "/" + LockPaths.READ_WRITE + "/" + LockPaths.nodeName(name);
            String node = raw().getChildren().forPath(rwPath).get(0);
            Optional<Holder> inNode = Holder.parse(new String(raw().getData().forPath(rwPath + "/" + node),
                    StandardCharsets.UTF_8));
            assertThat(inNode.map(Holder::owner)).as("the owner in a write lock's node").hasValue("web-1:4242");
            LockState writer = client("observer").readWriteLock(name).inspect().writerState().orElseThrow();
            assertThat(writer.holder()).as("the writer inspect reads from the node").isEqualTo(inNode);
            assertThat(writer.token()).as("the writer's token").hasValue(write.fencingToken());
        }
    }

    @Test
    @DisplayName("inspect of a name nobody ever held says free and creates no node; after the holder released,"
            + " free again")
    void freeNameCreatesNothing() throws Exception {
        String name = "free:" + System.nanoTime();
        LockClient observer = client("observer");
        DistributedLock lock = observer.lock(name);

        assertThat(lock.inspect().isHeld()).as("a name nobody held").isFalse();
        assertThat(raw().checkExists().forPath(lockPath(name))).as("zookeeper node %s after inspect", lockPath(name))
                .isNull();

        Lease lease = client("holder").lock(name).lock(PATIENT);
        assertThat(lock.inspect().holder().map(Holder::owner)).as("while held").hasValue("holder");
        lease.close();
        LockState after = lock.inspect();
        assertThat(after.isHeld()).as("right after the release: %s", after).isFalse();
        assertThat(after.token()).isEmpty();
    }

    @Test
    @DisplayName("with two waiters queued, one a plain Curator mutex, inspect names the holder and counts both; once it"
            + " released, the next waiter with its own token and one waiter left")
    void waiterIsNotTheHolderUntilGranted() throws Exception {
        String name = "queued:" + System.nanoTime();
        DistributedLock observed = client("observer").lock(name);
        Lease first = client("first").lock(name).lock(PATIENT);
        CompletableFuture<Optional<Lease>> second = client("second").lock(name).tryLockAsync(PATIENT);
        Awaitility.await("the waiter's node").atMost(PATIENT).pollInterval(Duration.ofMillis(20))
                .until(() -> raw().getChildren().forPath(lockPath(name)).size() == 2);
        // a Curator mutex is released by the thread that acquired it: one thread of its own
        ExecutorService mutexThread = Executors.newSingleThreadExecutor();
        InterProcessMutex third = new InterProcessMutex(raw(), lockPath(name));
        Future<Boolean> thirdGranted = mutexThread.submit(() -> third.acquire(PATIENT.toMillis() * 2,
                TimeUnit.MILLISECONDS));
        Awaitility.await("the mutex's node").atMost(PATIENT).pollInterval(Duration.ofMillis(20))
                .until(() -> raw().getChildren().forPath(lockPath(name)).size() == 3);

        LockState held = observed.inspect();
        assertThat(held.holder().map(Holder::owner)).as("with two waiters queued").hasValue("first");
        assertThat(held.token()).hasValue(first.fencingToken());
        assertThat(held.waiters()).as("the waiters behind the first: %s", held).hasValue(2);

        first.close();
        try (Lease next = second.get(PATIENT.toMillis(), TimeUnit.MILLISECONDS).orElseThrow()) {
            LockState now = observed.inspect();
            assertThat(now.holder().map(Holder::owner)).as("after the first released").hasValue("second");
            assertThat(now.token()).hasValue(next.fencingToken());
            assertThat(now.waiters()).as("the mutex still waiting: %s", now).hasValue(1);
        }
        try {
            assertThat(thirdGranted.get(PATIENT.toMillis(), TimeUnit.MILLISECONDS)).as("the mutex granted").isTrue();
            LockState last = observed.inspect();
            assertThat(last.holder()).as("the mutex holds").hasValue(Holder.UNKNOWN);
            assertThat(last.waiters()).as("nobody left waiting: %s", last).hasValue(0);
            mutexThread.submit(() -> {
                third.release();
                return null;
            }).get(PATIENT.toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            mutexThread.shutdownNow();
        }
    }

    @Test
    @DisplayName("a plain Curator mutex on the lock's path is a held lock whose holder is unknown, with its node's czxid")
    void curatorMutexHolderIsUnknown() throws Exception {
        String name = "curator:" + System.nanoTime();
        InterProcessMutex mutex = new InterProcessMutex(raw(), lockPath(name));
        assertThat(mutex.acquire(PATIENT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        try {
            String node = raw().getChildren().forPath(lockPath(name)).get(0);
            long czxid = raw().checkExists().forPath(lockPath(name) + "/" + node).getCzxid();
            LockState state = client("observer").lock(name).inspect();
            assertThat(state.holder()).hasValue(Holder.UNKNOWN);
            assertThat(state.token()).hasValue(czxid);
        } finally {
            mutex.release();
        }
    }

    @Test
    @DisplayName("inspect through a cut connection fails within timeout + slack with LockBackendUnavailableException")
    void cutConnectionFailsWithinTimeout() throws Exception {
        String name = "cut:" + System.nanoTime();
        try (TcpProxy proxy = TcpProxy.start(server().endpoints().get(0))) {
            LockClient client = client("cut", server().uri(List.of(proxy.endpoint())));
            DistributedLock lock = client.lock(name);
            assertThat(lock.inspect().isHeld()).as("before the cut").isFalse();
            proxy.cut();

            long start = System.nanoTime();
            CompletableFuture<LockState> inspected = CompletableFuture.supplyAsync(() -> {
                try {
                    return lock.inspect();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThatThrownBy(() -> inspected.get(OPTIONS.timeout().multipliedBy(2).plus(SLACK).toMillis(),
                    TimeUnit.MILLISECONDS)).isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(LockBackendUnavailableException.class).hasMessageContaining(name)
                    .hasMessageContaining(lockPath(name));
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("time until inspect failed")
                    .isLessThanOrEqualTo(OPTIONS.timeout().plus(SLACK));
            proxy.restore();
        }
    }

    @Test
    @DisplayName("inspect of a semaphore nobody used says every slot free and creates no node; while a permit is held,"
            + " another number of permits is refused naming both numbers and the path")
    void semaphoreInspectCreatesNothingAndRefusesAnotherNumber() throws Exception {
        String name = "sem-free:" + System.nanoTime();
        String path = LockPaths.DEFAULT_BASE + "/" + LockPaths.SEMAPHORES + "/" + LockPaths.nodeName(name);
        DistributedSemaphore seen = client("observer").semaphore(name, 2);

        assertThat(seen.inspect()).as("a semaphore nobody used")
                .containsExactly(LockState.free(name), LockState.free(name));
        assertThat(raw().checkExists().forPath(path)).as("zookeeper node %s after inspect", path).isNull();

        try (SemaphoreLease held = client("holder").semaphore(name, 2).tryAcquire(PATIENT).orElseThrow()) {
            assertThat(seen.inspect().get(held.slot()).holder().map(Holder::owner)).as("while held").hasValue("holder");
            DistributedSemaphore other = client("other").semaphore(name, 3);
            assertThatThrownBy(other::inspect).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(name).hasMessageContaining(path)
                    .hasMessageContaining("has 2 permits").hasMessageContaining("asked for 3");
        }
    }

    @Test
    @DisplayName("a semaphore's inspect through a cut connection fails within timeout + slack with"
            + " LockBackendUnavailableException")
    void semaphoreInspectThroughCutConnectionFailsWithinTimeout() throws Exception {
        String name = "sem-cut:" + System.nanoTime();
        try (TcpProxy proxy = TcpProxy.start(server().endpoints().get(0))) {
            DistributedSemaphore semaphore = client("cut", server().uri(List.of(proxy.endpoint()))).semaphore(name, 2);
            assertThat(semaphore.inspect()).as("before the cut").containsOnly(LockState.free(name));
            proxy.cut();

            long start = System.nanoTime();
            CompletableFuture<List<LockState>> inspected = CompletableFuture.supplyAsync(() -> {
                try {
                    return semaphore.inspect();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThatThrownBy(() -> inspected.get(OPTIONS.timeout().multipliedBy(2).plus(SLACK).toMillis(),
                    TimeUnit.MILLISECONDS)).isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(LockBackendUnavailableException.class).hasMessageContaining(name)
                    .hasMessageContaining(LockPaths.SEMAPHORES);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("time until inspect failed")
                    .isLessThanOrEqualTo(OPTIONS.timeout().plus(SLACK));
            proxy.restore();
        }
    }
}
