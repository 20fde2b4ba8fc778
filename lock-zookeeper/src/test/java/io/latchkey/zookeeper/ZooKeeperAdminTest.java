package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.LockState;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.CreateMode;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An operator's tools on ZooKeeper, beyond the kit's Admin group: what under the base path {@code list}
 * takes for a lock name and what it passes over, and what a force release deletes and tells the holder.
 * Each test has a base path of its own (the {@code namespace} option), so that it sees only its nodes.
 */
class ZooKeeperAdminTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(3))
            .timeout(Duration.ofSeconds(1)).build();
    private static final Duration PATIENT = OPTIONS.lease().multipliedBy(4);

    @RegisterExtension
    static final ZooKeeperFixture ZK = new ZooKeeperFixture();

    private LockClient client(String namespace, String owner) {
        return ZK.track(LockClient.connect(URI.create(ZK.server().uri(ZK.server().endpoints())),
                OPTIONS.toBuilder().namespace(namespace).owner(owner).build()));
    }

    private static String base(String namespace) {
        return "/" + namespace + LockPaths.DEFAULT_BASE;
    }

    @Test
    @DisplayName("list names the held locks, a plain Curator mutex's too, and passes over the semaphore and read-write"
            + " subtrees, another client's node, a lock path left with a slot record only, and a long name's hashed node")
    void listTakesOnlyLockNamesThatHoldALockNode() throws Exception {
        String ns = "admin-list" + System.nanoTime();
        String base = base(ns);
        LockClient holder = client(ns, "holder");
        Lease a = holder.lock("a").lock(PATIENT);
        Lease permit = holder.semaphore("s", 2).acquire(PATIENT);
        Lease write = holder.readWriteLock("rw").writeLock().lock(PATIENT);
        Lease longName = holder.lock("x".repeat(LockPaths.MAX_PLAIN + 1)).lock(PATIENT);
        ZK.raw().create().withMode(CreateMode.PERSISTENT).forPath(base + "/not a name");
        ZK.raw().create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT)
                .forPath(base + "/b/" + SlotRecord.NODE, "1 2030-01-01T00:00:00Z".getBytes());
        InterProcessMutex mutex = new InterProcessMutex(ZK.raw(), base + "/" + LockPaths.nodeName("m:utex"));
        assertThat(mutex.acquire(PATIENT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        try {
            LockClient seen = client(ns, "observer");
            assertThat(seen.list("")).as("every held lock under %s", base).containsExactly("a", "m:utex");
            assertThat(seen.list("", "a", 1)).as("the page after a").containsExactly("m:utex");
            assertThat(seen.list("m")).as("under the prefix m").containsExactly("m:utex");
        } finally {
            mutex.release();
            a.close();
            permit.close();
            write.close();
            longName.close();
            ZK.raw().delete().deletingChildrenIfNeeded().forPath("/" + ns);
        }
    }

    @Test
    @DisplayName("force release deletes exactly the holder's node and hands back its grant with the waiter behind it:"
            + " the holder's loss names the lock, its node and a force release, and the waiter is granted; a plain"
            + " Curator mutex's grant is ended too, as a holder nobody named and no waiter")
    void forceReleaseDeletesTheHoldersNode() throws Exception {
        String ns = "admin-force" + System.nanoTime();
        String lockPath = base(ns) + "/" + LockPaths.nodeName("job:1");
        Lease lease = client(ns, "holder").lock("job:1").lock(PATIENT);
        String node = ZK.raw().getChildren().forPath(lockPath).get(0);
        CompletableFuture<Optional<Lease>> waiter = client(ns, "waiter").lock("job:1").tryLockAsync(PATIENT);
        Awaitility.await("the waiter's node").atMost(PATIENT).pollInterval(Duration.ofMillis(20))
                .until(() -> ZK.raw().getChildren().forPath(lockPath).size() == 2);

        LockState ended = client(ns, "admin").lock("job:1").forceRelease();
        assertThat(ended.holder().map(Holder::owner)).hasValue("holder");
        assertThat(ended.token()).hasValue(lease.fencingToken());
        assertThat(ended.waiters()).as("the waiters behind the grant ended: %s", ended).hasValue(1);
        assertThat(ZK.raw().checkExists().forPath(lockPath + "/" + node)).as("the holder's node").isNull();
        Exception why = lease.lost().toCompletableFuture().get(OPTIONS.lease().toMillis(), TimeUnit.MILLISECONDS);
        assertThat(why).hasMessageContaining("job:1").hasMessageContaining(lockPath + "/" + node)
                .hasMessageContaining("force release");
        lease.close();
        try (Lease next = waiter.get(PATIENT.toMillis(), TimeUnit.MILLISECONDS).orElseThrow()) {
            assertThat(next.fencingToken()).as("the waiter's token").isGreaterThan(ended.token().getAsLong());
        }

        InterProcessMutex mutex = new InterProcessMutex(ZK.raw(), lockPath);
        assertThat(mutex.acquire(PATIENT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        String mutexNode = ZK.raw().getChildren().forPath(lockPath).stream().filter(n -> n.contains("lock-"))
                .findFirst().orElseThrow();
        long czxid = ZK.raw().checkExists().forPath(lockPath + "/" + mutexNode).getCzxid();
        LockState mutexEnded = client(ns, "admin").lock("job:1").forceRelease();
        assertThat(mutexEnded.holder()).hasValue(Holder.UNKNOWN);
        assertThat(mutexEnded.token()).hasValue(czxid);
        assertThat(mutexEnded.waiters()).as("nobody waiting behind the mutex: %s", mutexEnded).hasValue(0);
        assertThat(ZK.raw().checkExists().forPath(lockPath + "/" + mutexNode)).as("the mutex's node").isNull();
        assertThat(client(ns, "admin").lock("job:1").forceRelease()).as("again, once free")
                .isEqualTo(LockState.free("job:1"));
        ZK.raw().delete().deletingChildrenIfNeeded().forPath("/" + ns);
    }

    @Test
    @DisplayName("force release and list of names nobody holds create no node under the base path")
    void freeNamesCreateNothing() throws Exception {
        String ns = "admin-free" + System.nanoTime();
        LockClient admin = client(ns, "admin");
        assertThat(admin.lock("free:1").forceRelease().isHeld()).isFalse();
        assertThat(admin.list("free")).isEqualTo(List.of());
        assertThat(ZK.raw().getChildren().forPath(base(ns))).as("the base path's children").isEmpty();
        ZK.raw().delete().deletingChildrenIfNeeded().forPath("/" + ns);
    }
}
