package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Holder;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.SemaphoreLease;
import io.latchkey.testkit.CrashFailover;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.fault.OptionsUri;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What is particular to ZooKeeper's semaphores: their nodes apart from the locks', and the stored number of permits. */
class ZooKeeperSemaphoreTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(6)).build();

    @RegisterExtension
    static final SharedServer<ZooKeeperServer> ZOOKEEPER = SharedServer.of(ZooKeeperBackendTest.SERVER_KEY,
            ZooKeeperServer::start);
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeAfter.size() - 1; i >= 0; i--) {
            closeAfter.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closing(T c) {
        closeAfter.add(c);
        return c;
    }

    private LockClient client() {
        ZooKeeperServer server = ZOOKEEPER.get();
        return closing(LockClient.connect(URI.create(server.uri(server.endpoints())), OPTIONS));
    }

    private CuratorFramework raw() {
        return closing(ZooKeeperTestSupport.rawClient(ZOOKEEPER.get().connectString()));
    }

    @Test
    @DisplayName("a lock and a semaphore of one name are held at once on the server: the lock's node under the base"
            + " path, the permit's slot node under @semaphores, with the waiter's name and the holder text that inspect"
            + " reads, and a lock named '@semaphores' maps elsewhere")
    void semaphoreAndLockOfOneNameAreIndependentNodes() throws Exception {
        String name = "warehouse:" + System.nanoTime();
        LockClient a = client();
        LockClient b = client();
        CuratorFramework raw = raw();

        Lease lock = closing(a.lock(name).tryLock(Duration.ZERO).orElseThrow());
        SemaphoreLease permit = closing(b.semaphore(name, 1).tryAcquire(Duration.ZERO).orElseThrow());
        Lease trick = closing(a.lock(LockPaths.SEMAPHORES).tryLock(Duration.ZERO).orElseThrow());

        String lockPath = LockPaths.DEFAULT_BASE + "/" + LockPaths.nodeName(name);
        String semaphorePath = LockPaths.DEFAULT_BASE + "/" + LockPaths.SEMAPHORES + "/" + LockPaths.nodeName(name);
        assertThat(raw.getChildren().forPath(lockPath)).as("children of the lock's node %s", lockPath)
                .hasSize(1).allMatch(c -> c.contains("lock-"));
        assertThat(raw.getChildren().forPath(semaphorePath)).as("children of the semaphore's node %s", semaphorePath)
                .containsExactly("slot-0");
        Stat slot = raw.checkExists().forPath(semaphorePath + "/slot-0");
        assertThat(slot.getEphemeralOwner()).as("the slot is ephemeral").isNotZero();
        assertThat(permit.fencingToken()).as("the permit's token: the slot node's czxid").isEqualTo(slot.getCzxid());
        String[] slotData = new String(raw.getData().forPath(semaphorePath + "/slot-0"), StandardCharsets.UTF_8)
                .split("\n", 2);
        assertThat(slotData[0]).as("the slot's first line: the name of the waiter that took it").contains("-wait-");
        Holder written = Holder.parse(slotData[1])
                .orElseThrow(() -> new AssertionError("no holder text in slot-0: " + slotData[1]));
        assertThat(written.thread()).as("the thread that took the permit").isEqualTo(Thread.currentThread().getName());
        assertThat(a.semaphore(name, 1).inspect().get(0).holder()).as("the holder another client's inspect reads")
                .hasValue(written);
        assertThat(new String(raw.getData().forPath(semaphorePath), StandardCharsets.UTF_8))
                .as("the number of permits stored in the semaphore's node").isEqualTo("1");
        assertThat(raw.checkExists().forPath(LockPaths.DEFAULT_BASE + "/%40semaphores"))
                .as("the node of the lock named '%s'", LockPaths.SEMAPHORES).isNotNull();
        assertThat(lock.isValid() && permit.isValid() && trick.isValid()).isTrue();

        lock.close();
        assertThat(permit.isValid()).as("the permit after the lock of its name was released").isTrue();
        assertThat(raw.getChildren().forPath(semaphorePath)).containsExactly("slot-0");
        permit.close();
        Awaitility.await("the semaphore's node to be deleted by the container manager")
                .atMost(ZooKeeperTestSupport.containerReapBound(OPTIONS.timeout())).pollInterval(Duration.ofMillis(100))
                .until(() -> raw.checkExists().forPath(semaphorePath) == null);
    }

    @Test
    @DisplayName("another number of permits from a second client is refused naming the semaphore, its path and both"
            + " numbers, leaving no waiter; once the semaphore is gone from the server the other number is accepted")
    void mismatchedPermitsAcrossClients() throws Exception {
        String name = "spark-jobs-" + System.nanoTime();
        LockClient first = client();
        LockClient second = client();
        CuratorFramework raw = raw();
        String semaphorePath = LockPaths.DEFAULT_BASE + "/" + LockPaths.SEMAPHORES + "/" + LockPaths.nodeName(name);

        SemaphoreLease held = first.semaphore(name, 3).tryAcquire(Duration.ZERO).orElseThrow();
        assertThatThrownBy(() -> second.semaphore(name, 5).tryAcquire(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("semaphore '" + name + "'").hasMessageContaining(semaphorePath)
                .hasMessageContaining("has 3 permits").hasMessageContaining("asked for 5");
        // the refused waiter's node is deleted in the background, within one round trip
        Awaitility.await("the refused waiter's node to be deleted").atMost(OPTIONS.timeout())
                .pollInterval(Duration.ofMillis(20)).untilAsserted(() -> assertThat(raw.getChildren().forPath(semaphorePath))
                        .as("children after the refusal: the holder's slot only").containsExactly("slot-0"));
        assertThat(held.isValid()).isTrue();

        held.close();
        Awaitility.await("the semaphore's node to be deleted by the container manager")
                .atMost(ZooKeeperTestSupport.containerReapBound(OPTIONS.timeout())).pollInterval(Duration.ofMillis(100))
                .until(() -> raw.checkExists().forPath(semaphorePath) == null);
        SemaphoreLease again = closing(second.semaphore(name, 5).tryAcquire(Duration.ZERO).orElseThrow());
        assertThat(again.permits()).isEqualTo(5);
        assertThat(new String(raw.getData().forPath(semaphorePath), StandardCharsets.UTF_8)).isEqualTo("5");
    }

    @Test
    @DisplayName("a killed holder's permit is free within lease plus the waiter's wake-up (250 ms)")
    void killedHoldersPermitIsFreeWithinLeasePlusWakeUp() throws Exception {
        ZooKeeperServer server = ZOOKEEPER.get();
        CrashFailover.permit(OptionsUri.of(server.uri(server.endpoints()), OPTIONS), client(),
                "crash:" + System.nanoTime(), 2, OPTIONS.lease(), 2);
    }
}
