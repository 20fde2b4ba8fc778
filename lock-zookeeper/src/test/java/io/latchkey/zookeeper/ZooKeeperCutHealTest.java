package io.latchkey.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.latchkey.DistributedLock;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.fault.TcpProxy;
import io.latchkey.testkit.zookeeper.ZooKeeperServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The cut of {@code latchkey demo}, against a real server: several clients behind one proxy race for a
 * lock, retrying their acquires while every client's traffic is held past the lease, then delivered.
 * Each lease is an interval from its grant to the earliest of its {@code lost()}, its release and the
 * latest deadline its {@code remaining()} claimed; no two may overlap. Once the network is back and the
 * sessions of before the cut are gone, the clients must work as before: no acquire fails as
 * unavailable, no lease is lost. Bounds come from {@code lease}, {@code timeout} and the server's tick.
 */
class ZooKeeperCutHealTest {

    private static final LockOptions OPTIONS = LockOptions.builder().lease(Duration.ofSeconds(3))
            .timeout(Duration.ofSeconds(1)).build();
    private static final int CLIENTS = 3;
    private static final long CHECK_EVERY_MS = 100;

    @RegisterExtension
    static final SharedServer<ZooKeeperServer> ZOOKEEPER = SharedServer.of(ZooKeeperBackendTest.SERVER_KEY,
            ZooKeeperServer::start);
    private static ZooKeeperServer server;
    private static Duration tick;

    /** One lease as a holder saw it, on this JVM's monotonic clock. */
    private static final class Held {
        final String client;
        final long token;
        final long start;
        final AtomicLong claimed = new AtomicLong();
        final AtomicLong lostAt = new AtomicLong(Long.MAX_VALUE);
        volatile long releasedAt = Long.MAX_VALUE;

        Held(String client, long token, long start) {
            this.client = client;
            this.token = token;
            this.start = start;
        }

        void claim(Lease lease) {
            long deadline = System.nanoTime() + lease.remaining().toNanos(); // counted from after remaining() returned
            claimed.accumulateAndGet(deadline, Math::max);
        }

        long end() {
            return Math.min(claimed.get(), Math.min(lostAt.get(), releasedAt));
        }

        @Override
        public String toString() {
            return client + " token " + token + " [" + start / 1_000_000 + " ms, " + end() / 1_000_000 + " ms]"
                    + (lostAt.get() != Long.MAX_VALUE ? " lost at " + lostAt.get() / 1_000_000 + " ms" : "");
        }
    }

    @BeforeAll
    static void learnTick() throws Exception {
        server = ZOOKEEPER.get();
        tick = ZooKeeperTestSupport.tick(server);
    }

    @Test
    @DisplayName("a cut of every client past the lease, then healed: never two valid leases, and the clients work again")
    void cutOfEveryClientHeals() throws Exception {
        String name = "cut-heal-" + System.nanoTime();
        Seen results = new Seen();
        AtomicBoolean running = new AtomicBoolean(true);
        List<Thread> workers = new ArrayList<>();
        InetSocketAddress target = server.endpoints().get(0);
        try (TcpProxy proxy = TcpProxy.start(target)) {
            String uri = server.uri(List.of(proxy.endpoint()));
            List<LockClient> clients = new ArrayList<>();
            try {
                for (int i = 0; i < CLIENTS; i++) {
                    clients.add(LockClient.connect(URI.create(uri), OPTIONS));
                }
                for (int i = 0; i < CLIENTS; i++) {
                    DistributedLock lock = clients.get(i).lock(name);
                    String client = "client-" + i;
                    Thread t = new Thread(() -> race(client, lock, running, results), "cut-heal-" + client);
                    t.start();
                    workers.add(t);
                }
                Thread.sleep(OPTIONS.lease().toMillis()); // a few grants before the cut
                long cutAt = System.nanoTime();
                proxy.cut();
                Thread.sleep(OPTIONS.lease().plusMillis(1500).toMillis()); // as the demo: past the lease
                proxy.restore();
                long healed = System.nanoTime();
                // the sessions of before the cut expire within a session (lease minus a tick) plus a tick of the
                // server after the last byte they sent, which was before the cut; after that and one round trip
                // for the new sessions, the clients must work as before the cut
                long settled = healed + OPTIONS.lease().plus(tick).plus(OPTIONS.timeout()).toNanos();
                Thread.sleep(TimeUnit.NANOSECONDS.toMillis(settled - System.nanoTime()) + OPTIONS.lease().toMillis() * 4);
                running.set(false);
                for (Thread t : workers) {
                    t.join(OPTIONS.lease().plus(OPTIONS.timeout()).multipliedBy(2).toMillis());
                }

                List<Held> leases = new ArrayList<>(results.leases);
                leases.sort((a, b) -> Long.compare(a.start, b.start));
                List<String> overlaps = new ArrayList<>();
                for (int i = 0; i < leases.size(); i++) {
                    for (int j = i + 1; j < leases.size(); j++) {
                        if (leases.get(j).start - leases.get(i).end() < 0) {
                            overlaps.add(leases.get(i) + " overlaps " + leases.get(j));
                        }
                    }
                }
                String story = "cut at " + cutAt / 1_000_000 + " ms, healed at " + healed / 1_000_000 + " ms, settled at "
                        + settled / 1_000_000 + " ms; leases " + leases + "; unavailable at " + results.unavailable;
                assertThat(overlaps).as(story).isEmpty();
                assertThat(leases.stream().filter(l -> l.start - cutAt < 0)).as(story).isNotEmpty();
                assertThat(leases.stream().filter(l -> l.start - settled > 0)).as("grants after the network was back: " + story)
                        .isNotEmpty();
                assertThat(leases.stream().filter(l -> l.start - settled > 0 && l.lostAt.get() != Long.MAX_VALUE))
                        .as("leases granted once the network was back and lost with no fault: " + story).isEmpty();
                assertThat(results.unavailable.stream().filter(at -> at - settled > 0))
                        .as("acquires that failed as unavailable once the network was back: " + story).isEmpty();
            } finally {
                running.set(false);
                for (LockClient c : clients) {
                    c.close();
                }
            }
        }
    }

    /** What the racing threads saw. */
    private static final class Seen {
        final ConcurrentLinkedQueue<Held> leases = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<Long> unavailable = new ConcurrentLinkedQueue<>();
    }

    /** As a demo worker: try for two seconds, hold about a lease checking often, rest, again; retry when unavailable. */
    private static void race(String client, DistributedLock lock, AtomicBoolean running, Seen results) {
        while (running.get()) {
            Optional<Lease> maybe;
            try {
                maybe = lock.tryLock(Duration.ofSeconds(2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (LockException e) {
                results.unavailable.add(System.nanoTime());
                sleep(200);
                continue;
            }
            if (maybe.isEmpty()) {
                continue;
            }
            Lease lease = maybe.get();
            Held held = new Held(client, lease.fencingToken(), System.nanoTime());
            held.claim(lease);
            lease.lost().thenAccept(e -> held.lostAt.compareAndSet(Long.MAX_VALUE, System.nanoTime()));
            results.leases.add(held);
            long end = System.nanoTime() + OPTIONS.lease().toNanos();
            while (running.get() && System.nanoTime() - end < 0 && lease.isValid()) {
                held.claim(lease);
                sleep(CHECK_EVERY_MS);
            }
            held.releasedAt = System.nanoTime(); // before the close: from here this holder no longer uses it
            try {
                lease.close();
            } catch (LockException e) {
                // the release did not reach the server: the node goes with the session
            }
            sleep(300);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
