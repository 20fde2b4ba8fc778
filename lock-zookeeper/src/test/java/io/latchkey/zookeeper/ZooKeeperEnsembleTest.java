package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.testkit.LinearizableFailoverContract;
import io.latchkey.testkit.history.FencedResource;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import io.latchkey.testkit.zookeeper.ZooKeeperEnsemble;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.apache.curator.framework.CuratorFramework;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loss of the ensemble's leader while a lock is held and others wait: the kit's linearizable failover
 * contract, and a test of what the holder itself sees. Each test kills one leader; the node is started
 * again after the test, so every test begins with three nodes.
 */
class ZooKeeperEnsembleTest extends LinearizableFailoverContract<ZooKeeperEnsemble> {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperEnsembleTest.class);
    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(6)).build();
    private static final Duration LEASE = OPTIONS.lease();
    /** Crash release plus an election: a lease, a timeout to reconnect, and the margin. */
    private static final Duration FAILOVER = LEASE.plus(OPTIONS.timeout()).plus(OPTIONS.safetyMargin());
    private static final Duration PATIENT = FAILOVER.multipliedBy(3);
    private static final int WAITERS = 2;
    private int stopped = -1;

    ZooKeeperEnsembleTest() {
        super(ZooKeeperEnsemble::start);
    }

    @Override
    protected void failLeader() {
        int leader = cluster().leader();
        assertThat(leader).as("the ensemble's leader").isNotNegative();
        stopped = leader;
        cluster().stopNode(leader);
    }

    @Override
    protected Duration failoverTime() {
        return ZooKeeperEnsemble.failoverTime();
    }

    @AfterEach
    void startStoppedNode() {
        if (stopped >= 0) {
            cluster().startNode(stopped);
            stopped = -1;
        }
    }

    @Test
    @DisplayName("leader loss while a lock is held and others wait: the holder stays valid or turns invalid before"
            + " anyone else is granted, never two valid holders, and the lock is usable afterwards")
    void leaderLossWhileHeldAndContended() throws Exception {
        String name = "ensemble:" + System.nanoTime();
        String lockPath = LockPaths.DEFAULT_BASE + "/" + LockPaths.nodeName(name);
        History history = new History();
        FencedResource resource = new FencedResource(name);
        List<LockClient> clients = new ArrayList<>();
        ExecutorService executor = Executors.newCachedThreadPool();
        try (CuratorFramework raw = ZooKeeperTestSupport.rawClient(cluster().connectString())) {
            LockClient holderClient = connect(clients);
            long requested = History.now();
            Lease holder = holderClient.lock(name).lock(PATIENT);
            History.Grant held = history.acquired("holder", name, holder.fencingToken(), requested, History.now());
            assertThat(held.check(holder::isValid)).isTrue();
            assertThat(resource.write(held)).isTrue();

            List<Future<Boolean>> waiters = new ArrayList<>();
            for (int i = 0; i < WAITERS; i++) {
                DistributedLock lock = connect(clients).lock(name);
                String actor = "waiter" + i;
                waiters.add(executor.submit(() -> takeBriefly(lock, actor, history, resource)));
            }
            Awaitility.await("the waiters to queue").atMost(PATIENT).pollInterval(Duration.ofMillis(20))
                    .until(() -> raw.getChildren().forPath(lockPath).size() == 1 + WAITERS);

            AtomicBoolean stop = new AtomicBoolean();
            Future<?> watcher = executor.submit(() -> {
                while (!stop.get() && held.check(holder::isValid)) {
                    Thread.sleep(1); // the pace of observation
                }
                return null;
            });
            long stoppedAt = History.now();
            history.fault("SIGKILL of the leader", name, stoppedAt);
            failLeader();
            int leader = stopped;
            List<Integer> others = IntStream.range(0, 3).filter(i -> i != leader).boxed().toList();
            cluster().awaitServing(others);
            log.info("a new leader serves {} ms after the old one was killed",
                    TimeUnit.NANOSECONDS.toMillis(History.now() - stoppedAt));

            // a holder whose session survived keeps its lease for a full lease after the election
            Thread.sleep(LEASE.toMillis());
            stop.set(true);
            watcher.get(PATIENT.toMillis(), TimeUnit.MILLISECONDS);
            boolean survived = holder.isValid();
            log.info("the holder's lease {} the loss of the leader", survived ? "survived" : "did not survive");
            long releasedAt = History.now();
            try {
                holder.close();
            } catch (LockException e) {
                // the node then goes with the session
            }
            held.released(History.now());

            for (Future<Boolean> w : waiters) {
                assertThat(w.get(PATIENT.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS)).as("a waiter got the lock").isTrue();
            }
            LockClient after = connect(clients);
            long askedAt = History.now();
            Optional<Lease> last = after.lock(name).tryLock(FAILOVER);
            assertThat(last).as("the lock after the leader loss").isPresent();
            History.Grant lastGrant = history.acquired("after", name, last.get().fencingToken(), askedAt, History.now());
            assertThat(lastGrant.check(last.get()::isValid)).isTrue();
            assertThat(resource.write(lastGrant)).as("a write after the leader loss").isTrue();
            last.get().close();

            HistoryChecker.assertConsistent(history);
            HistoryChecker.assertAvailableWithin(history, name, releasedAt, FAILOVER);
        } finally {
            clients.forEach(LockClient::close);
            executor.shutdownNow();
        }
    }

    private LockClient connect(List<LockClient> clients) {
        LockClient c = LockClient.connect(URI.create(cluster().uri(cluster().endpoints())), OPTIONS);
        clients.add(c);
        return c;
    }

    /** Takes the lock, retrying while the ensemble has no leader, writes once and releases. */
    private static boolean takeBriefly(DistributedLock lock, String actor, History history, FencedResource resource)
            throws InterruptedException {
        long giveUp = System.nanoTime() + PATIENT.multipliedBy(2).toNanos();
        while (System.nanoTime() - giveUp < 0) {
            long requested = History.now();
            Optional<Lease> got;
            try {
                got = lock.tryLock(PATIENT);
            } catch (LockException e) {
                log.info("{}: {}; trying again", actor, e.getMessage());
                continue;
            }
            if (got.isEmpty()) {
                return false;
            }
            Lease lease = got.get();
            try {
                history.writeOnce(actor, lease, requested, resource);
            } catch (LockException e) {
                // a release that did not reach the ensemble: the node goes with the session
            } finally {
                lease.close();
            }
            return true;
        }
        return false;
    }
}
