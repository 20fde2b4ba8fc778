package io.latchkey.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.testkit.history.FencedResource;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.HistoryChecker;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The cluster capability: the loss of the leader (primary, broker, elected member) of a three-node
 * cluster while a lock is held and contenders wait. A backend with a cluster fixture subclasses this
 * (next to its {@link LockContract} test on a single node), supplying the cluster and the way its
 * leader is lost.
 *
 * <p>This contract asserts what every backend owes across a failover: the fenced resource never
 * accepts a stale write, and the lock is granted again within {@code failoverTime() + lease +
 * timeout + slack}. A backend that replicates the lock by consensus (ZooKeeper, etcd, Kafka's group
 * coordinator on a replicated log) subclasses {@link LinearizableFailoverContract} instead, which
 * also asserts that no two leases were valid at once and that tokens kept increasing; one that
 * replicates asynchronously (Redis with sentinels) may lose the lock in a failover, and relies on
 * the loss signal and the fencing token there.
 *
 * <p>The kit starts the cluster with the factory given to the constructor before the first test and
 * closes it after the last one. The cluster is the class's own, never shared: the leader's node stays lost after the
 * failover unless the subclass brings it back.
 *
 * @param <S> the kind of cluster, so that {@link #failLeader()} reaches its own accessors
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(ServerLifecycle.class)
public abstract class ClusterFailoverContract<S extends LockServer> {

    /** Contenders waiting while the leader is lost. */
    static final int CONTENDERS = 2;

    private final Deque<AutoCloseable> opened = new ArrayDeque<>();

    private final Supplier<? extends S> startCluster;
    private volatile S cluster;

    /**
     * A failover test on a cluster that {@code startCluster} starts (and returns once it serves) before
     * the first test of the class; the kit closes it after the last.
     */
    protected ClusterFailoverContract(Supplier<? extends S> startCluster) {
        this.startCluster = Objects.requireNonNull(startCluster, "startCluster");
    }

    /** The running cluster; there from the first test of the class on. */
    protected final S cluster() {
        return ServerLifecycle.started(cluster, this, "cluster()");
    }

    /** Starts the cluster of the class of {@code context}, closed when the class ends; called by {@link ServerLifecycle}. */
    final void useCluster(ExtensionContext context) {
        cluster = SharedServer.in(context, getClass().getName(), startCluster);
    }

    /** Loses the current leader (kills its node, without a goodbye); returns once the fault is done. */
    protected abstract void failLeader();

    /** How long the cluster takes to serve again after {@link #failLeader()}: detection plus election. */
    protected abstract Duration failoverTime();

    /** The options of every client; a 6 s lease by default. */
    protected LockOptions options() {
        return LockOptions.builder().lease(Duration.ofSeconds(6)).build();
    }

    /** A new client of the cluster, through every endpoint. */
    protected LockClient newClient() {
        return LockClient.connect(URI.create(cluster().uri(cluster().endpoints())), options());
    }

    /** The small bound added to configured times; as {@link LockContract#slack()}. */
    protected Duration slack() {
        Duration halfTimeout = options().timeout().dividedBy(2);
        return options().safetyMargin().compareTo(halfTimeout) > 0 ? options().safetyMargin() : halfTimeout;
    }

    /** Whether no two leases may be valid at once across the failover; see {@link LinearizableFailoverContract}. */
    boolean linearizable() {
        return false;
    }

    @AfterEach
    final void closeEverything() {
        AutoCloseable c;
        while ((c = opened.pollFirst()) != null) {
            try {
                c.close();
            } catch (Exception e) {
                // the cluster lost a node: a close that cannot reach it expires on its own
            }
        }
    }

    @Test
    @DisplayName("loss of the leader while a lock is held and contenders wait: no stale write is accepted,"
            + " and the lock is granted again within the failover time plus the lease")
    void leaderLossWhileHeldAndContended() throws Exception {
        String name = "contract:failover:" + Long.toHexString(System.nanoTime());
        Duration bound = failoverTime().plus(options().lease()).plus(options().timeout()).plus(slack());
        History history = new History();
        FencedResource resource = new FencedResource(name);
        ExecutorService pool = Executors.newCachedThreadPool();
        opened.addFirst(pool::shutdownNow);
        LockClient holderClient = open(newClient());
        long requested = History.now();
        Lease holder = holderClient.lock(name).tryLock(bound).orElseThrow(() -> new AssertionError("no first grant"));
        History.Grant held = history.acquired("holder", name, holder.fencingToken(), requested, History.now());
        held.check(holder::isValid);
        resource.write(held);

        Duration contenderWait = bound.multipliedBy(3);
        List<Future<Boolean>> contenders = new ArrayList<>();
        for (int i = 0; i < CONTENDERS; i++) {
            DistributedLock lock = open(newClient()).lock(name);
            String actor = "contender" + i;
            contenders.add(pool.submit(() -> contend(lock, actor, contenderWait, history, resource)));
        }
        AtomicBoolean stop = new AtomicBoolean();
        Future<?> watcher = pool.submit(() -> {
            while (!stop.get() && held.check(holder::isValid)) {
                Thread.sleep(1); // the pace of observation
                if (holder.isValid()) {
                    // the holder keeps writing while it believes it holds the lock
                    resource.write(held);
                }
            }
            return null;
        });

        long failedAt = History.now();
        history.fault("loss of the leader", name, failedAt);
        failLeader();
        Thread.sleep(bound.toMillis()); // the holder lives through the failover, then lets go
        stop.set(true);
        watcher.get(bound.toMillis(), TimeUnit.MILLISECONDS);
        try {
            holder.close();
        } catch (LockException e) {
            // the release may not reach the cluster; the lock expires on its own
        }
        held.released(History.now());

        for (Future<Boolean> c : contenders) {
            assertThat(c.get(contenderWait.plus(bound).toMillis(), TimeUnit.MILLISECONDS))
                    .as("a contender got the lock after the failover").isTrue();
        }
        HistoryChecker.assertNoStaleWriteAccepted(history);
        HistoryChecker.assertAvailableWithin(history, name, failedAt, bound.multipliedBy(2));
        if (linearizable()) {
            HistoryChecker.assertConsistent(history);
        }
    }

    private Boolean contend(DistributedLock lock, String actor, Duration wait, History history,
            FencedResource resource) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (System.nanoTime() - deadline < 0) {
            long requested = History.now();
            Optional<Lease> got;
            try {
                got = lock.tryLock(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            } catch (LockException e) {
                continue; // the cluster is electing: try again, as an application would
            }
            if (got.isEmpty()) {
                return false;
            }
            try (Lease lease = got.get()) {
                history.writeOnce(actor, lease, requested, resource);
            } catch (LockException e) {
                // a release that cannot reach the cluster: the lock expires on its own
            }
            return true;
        }
        return false;
    }

    private <T extends AutoCloseable> T open(T c) {
        opened.addFirst(c);
        return c;
    }
}
