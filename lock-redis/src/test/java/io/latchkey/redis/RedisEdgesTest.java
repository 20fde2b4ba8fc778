package io.latchkey.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.latchkey.Lease;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.testkit.SharedServer;
import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.TcpProxy;
import io.latchkey.testkit.redis.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The edges of the Redis backend: bounded connects and calls on every kind of unreachable
 * server, the right exception and message, waiters woken after a restart, failover within the lease,
 * one renewer, and the options of the application's own Redisson client.
 */
class RedisEdgesTest {

    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    /** One extra round trip of scheduling on a loaded machine, as the kit's slack: half the timeout. */
    private static final Duration SLACK = TIMEOUT.dividedBy(2);
    /** The waiter's wake-up after a release or an expiry. */
    private static final Duration WAKE_UP = Duration.ofMillis(250);

    @RegisterExtension
    static final SharedServer<RedisServer> REDIS = SharedServer.of(RedisLockTest.SERVER_KEY, RedisServer::start);
    private static RedisServer server;
    private static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "edges-test");
        t.setDaemon(true);
        return t;
    });

    @BeforeAll
    static void useSharedServer() {
        server = REDIS.get();
    }

    @AfterAll
    static void stopPool() {
        POOL.shutdownNow();
    }

    private static LockOptions options() {
        return LockOptions.builder().lease(LEASE).timeout(TIMEOUT).build();
    }

    private static String uri() {
        return server.uri(server.endpoints());
    }

    private static LockClient client(LockOptions options) {
        return LockClient.connect(java.net.URI.create(uri()), options);
    }

    private static Duration since(long startNanos) {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }

    private static int occurrences(String text, String part) {
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + part.length())) {
            n++;
        }
        return n;
    }

    // ---- bounds and messages of connect ----

    /**
     * A fresh JVM's connect is charged only for the server's time: four child JVMs started at once, each
     * connecting with {@code lease=2s} and the longest timeout that lease leaves ({@code 666ms}, so that
     * a renewal answered within it still finds the lease valid), all connect to the healthy server and
     * take a lock. Their start-up (Redisson, Netty, four JVMs on a loaded machine) takes far longer
     * than 666 ms; it is bounded by the child's own start-up guard, not by the timeout.
     */
    @Test
    void four_fresh_jvms_connect_at_once_with_lease_2s_and_timeout_666ms() throws Exception {
        String childUri = uri() + "?lease=2s&timeout=666ms";
        CountDownLatch go = new CountDownLatch(1);
        List<Future<ChildHolder>> children = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            children.add(POOL.submit(() -> {
                go.await();
                return ChildHolder.start(childUri);
            }));
        }
        go.countDown();
        try {
            for (int i = 0; i < children.size(); i++) {
                // a child that could not connect answers "error ..." and start() fails, quoting it
                ChildHolder child = children.get(i).get(ChildHolder.STARTUP_GUARD.toMillis(), TimeUnit.MILLISECONDS);
                ChildHolder.Reply got = child.acquire("cold-start:" + i + ":" + System.nanoTime(), Duration.ZERO,
                        ChildHolder.STARTUP_GUARD);
                assertThat(got.kind()).as("child JVM %d's first acquire of a free lock: %s", i, got).isEqualTo("acquired");
            }
        } finally {
            for (Future<ChildHolder> f : children) {
                try {
                    ChildHolder c = f.get(ChildHolder.STARTUP_GUARD.toMillis(), TimeUnit.MILLISECONDS);
                    c.close();
                } catch (Exception e) {
                    // failed to start: nothing to close; the assertion above reports it
                }
            }
        }
    }

    @Test
    void connect_to_a_listener_that_never_answers_fails_within_the_timeout() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            String target = "redis://127.0.0.1:" + silent.getLocalPort();
            long start = System.nanoTime();
            assertThatThrownBy(() -> LockClient.connect(java.net.URI.create(target), options()).close())
                    .isInstanceOf(LockBackendUnavailableException.class)
                    .satisfies(e -> {
                        assertThat(e.getMessage()).contains("did not answer").contains("raise the timeout")
                                .contains(io.latchkey.spi.Durations.format(TIMEOUT)).doesNotContain("PT");
                        assertThat(occurrences(e.getMessage(), target)).as("the URI, once: " + e.getMessage()).isEqualTo(1);
                    });
            assertThat(since(start)).isLessThan(TIMEOUT.plus(SLACK));
        }
    }

    @Test
    void connect_to_a_refused_port_fails_within_the_timeout_without_advice_to_raise_it() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        String target = "redis://127.0.0.1:" + port;
        long start = System.nanoTime();
        assertThatThrownBy(() -> LockClient.connect(java.net.URI.create(target), options()).close())
                .isInstanceOf(LockBackendUnavailableException.class)
                .satisfies(e -> {
                    assertThat(e.getMessage()).contains("refused").doesNotContain("raise the timeout")
                            .doesNotContain("pool size");
                    assertThat(occurrences(e.getMessage(), target)).as("the URI, once: " + e.getMessage()).isEqualTo(1);
                });
        assertThat(since(start)).isLessThan(TIMEOUT.plus(SLACK));
    }

    @Test
    void connect_to_an_unresolvable_host_fails_within_the_timeout_naming_the_host() {
        String target = "redis://no-such-host.invalid:6379";
        long start = System.nanoTime();
        assertThatThrownBy(() -> LockClient.connect(java.net.URI.create(target), options()).close())
                .isInstanceOf(LockBackendUnavailableException.class)
                .satisfies(e -> assertThat(e.getMessage()).contains("no-such-host.invalid").contains("resolve")
                        .doesNotContain("raise the timeout"));
        assertThat(since(start)).isLessThan(TIMEOUT.plus(SLACK));
    }

    @Test
    void connect_with_the_password_in_the_uri_never_prints_it() {
        String target = "redis://user:s3cret@no-such-host.invalid:6379";
        assertThatThrownBy(() -> LockClient.connect(target).close())
                .isInstanceOf(LockBackendUnavailableException.class)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("s3cret").contains("****"));
    }

    // ---- bounds and messages of calls ----

    @Test
    void a_server_gone_after_connect_is_backend_unavailable_on_every_call_within_wait_plus_timeout() throws Exception {
        TcpProxy proxy = TcpProxy.start(server.endpoints().get(0));
        String target = "redis://" + proxy.endpoint().getHostString() + ":" + proxy.endpoint().getPort();
        try (LockClient client = LockClient.connect(java.net.URI.create(target), options())) {
            Lease held = client.lock("gone:held").lock(Duration.ZERO);
            proxy.close(); // the port now refuses: Redisson reconnects and is refused
            Duration wait = Duration.ofMillis(500);
            for (int i = 0; i < 3; i++) {
                long start = System.nanoTime();
                assertThatThrownBy(() -> client.lock("gone").tryLock(wait))
                        .isInstanceOf(LockBackendUnavailableException.class)
                        .satisfies(e -> assertThat(e.getMessage()).contains("lock 'gone'")
                                .contains("redis key 'latchkey:gone'").doesNotContain("pool size")
                                .doesNotContain("Unexpected exception").doesNotContain("redis.call"));
                assertThat(since(start)).isLessThan(wait.plus(TIMEOUT).plus(SLACK));
            }
            long start = System.nanoTime();
            assertThatThrownBy(held::close).isInstanceOf(LockBackendUnavailableException.class)
                    .satisfies(e -> assertThat(e.getMessage()).contains("latchkey:gone:held").doesNotContain("pool size"));
            assertThat(since(start)).isLessThan(TIMEOUT.plus(SLACK));
        }
    }

    /**
     * A call whose connection closes before Redis answered fails then, not at the timeout, though
     * Redisson itself leaves a command it wrote to its timeout ({@link RedisClosedChannels}). The
     * timeout is long here, so that the two cannot be confused.
     */
    @Test
    void a_call_whose_connection_closes_before_the_answer_fails_at_once_not_at_the_timeout() throws Exception {
        Duration timeout = Duration.ofSeconds(10);
        TcpProxy proxy = TcpProxy.start(server.endpoints().get(0));
        String target = "redis://" + proxy.endpoint().getHostString() + ":" + proxy.endpoint().getPort();
        LockOptions options = LockOptions.builder().lease(timeout.multipliedBy(3)).timeout(timeout).build();
        try (LockClient client = LockClient.connect(java.net.URI.create(target), options)) {
            client.lock("closed:warm-up").lock(Duration.ZERO).close();
            proxy.cut(); // the request below is written and waits in the proxy for an answer that never comes
            Future<Optional<Lease>> call = POOL.submit(() -> client.lock("closed").tryLock(Duration.ZERO));
            Thread.sleep(SLACK.toMillis());
            long closedAt = System.nanoTime();
            proxy.close();
            assertThatThrownBy(() -> call.get(timeout.toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(LockBackendUnavailableException.class)
                    .satisfies(e -> assertThat(e.getMessage()).contains("lock 'closed'")
                            .contains("connection was lost").doesNotContain("did not answer"));
            assertThat(since(closedAt)).as("from the close of the connection to the call's failure")
                    .isLessThan(timeout.dividedBy(2));
        }
    }

    @Test
    void a_paused_server_times_out_with_a_message_that_names_the_key_and_embeds_no_script() throws Exception {
        try (LockClient client = client(options())) {
            client.lock("paused:warm-up").lock(Duration.ZERO).close();
            server.pause();
            try {
                Duration wait = Duration.ofMillis(500);
                long start = System.nanoTime();
                assertThatThrownBy(() -> client.lock("paused").tryLock(wait))
                        .isInstanceOf(LockBackendUnavailableException.class)
                        .satisfies(e -> assertThat(e.getMessage()).contains("redis key 'latchkey:paused'")
                                .contains("raise the timeout").contains(io.latchkey.spi.Durations.format(TIMEOUT))
                                .doesNotContain("redis.call").doesNotContain("params").doesNotContain("PT1S"));
                assertThat(since(start)).isLessThan(wait.plus(TIMEOUT).plus(SLACK));
            } finally {
                server.unpause();
            }
        }
    }

    @Test
    void connect_to_a_paused_server_fails_within_the_timeout() throws Exception {
        server.pause();
        try {
            long start = System.nanoTime();
            assertThatThrownBy(() -> client(options()).close()).isInstanceOf(LockBackendUnavailableException.class);
            assertThat(since(start)).isLessThan(TIMEOUT.plus(SLACK));
        } finally {
            server.unpause();
        }
    }

    // ---- waiters after a restart, failover within the lease ----

    /**
     * After a restart, waiters were once no longer woken by a release. Two waiters in clients of their
     * own wait from before the restart; once the server serves again and their clients subscribed again,
     * the holder's release must wake the first within a round trip and the wake-up, and its release the
     * second: never their own retry at the holder key's expiry, which is most of a lease away.
     */
    @Test
    void after_a_restart_releases_wake_the_waiters_of_other_clients_not_their_own_retry() throws Exception {
        // A long lease, so that a waiter that was not woken would sit out most of a lease before retrying.
        Duration timeout = TIMEOUT.multipliedBy(2); // three clients connect, the first of them maybe in a cold JVM
        LockOptions longLease = LockOptions.builder().lease(Duration.ofSeconds(20)).timeout(timeout).build();
        String name = "restart:wake";
        String key = RedisLockBackend.DEFAULT_NAMESPACE + ":" + name;
        // a wake-up: the release's message and the woken waiter's grant, one round trip each at most
        Duration wakeUp = timeout.plus(WAKE_UP);
        try (LockClient holderClient = client(longLease); LockClient a = client(longLease); LockClient b = client(longLease)) {
            Lease held = holderClient.lock(name).lock(Duration.ZERO);
            Duration wait = longLease.lease().multipliedBy(2);
            List<Future<long[]>> waiters = new ArrayList<>();
            for (LockClient c : List.of(a, b)) {
                waiters.add(POOL.submit(() -> {
                    Lease got = c.lock(name).lock(wait);
                    long grantedAt = System.nanoTime();
                    got.close();
                    return new long[] {grantedAt, System.nanoTime()};
                }));
            }
            // both wait on the server: queued, and subscribed to the lock's wake-ups
            org.awaitility.Awaitility.await("both waiters queued and subscribed").atMost(longLease.lease().dividedBy(2))
                    .until(() -> queued(key) == 2 && subscribers(key) == 2);
            server.restart();
            // the server serves again: the holder's renewal reaches it
            org.awaitility.Awaitility.await("the holder renewed after the restart").atMost(longLease.lease().dividedBy(2))
                    .until(() -> held.remaining().compareTo(longLease.lease().minus(longLease.safetyMargin()).minus(timeout)) > 0
                            && held.isValid());
            // their clients subscribed again (Redisson reconnects and resubscribes), well before their own retries
            org.awaitility.Awaitility.await("the waiters' clients subscribed again after the restart")
                    .atMost(longLease.lease().dividedBy(4)).until(() -> subscribers(key) == 2);
            assertThat(queued(key)).as("waiters still queued after the restart (the queue is in the append-only file)")
                    .isEqualTo(2);
            long releasedAt = System.nanoTime();
            held.close();
            List<long[]> times = new ArrayList<>();
            for (Future<long[]> w : waiters) {
                times.add(w.get(wakeUp.multipliedBy(2).plus(SLACK).toMillis(), TimeUnit.MILLISECONDS));
            }
            times.sort((x, y) -> Long.compare(x[0], y[0]));
            assertThat(Duration.ofNanos(times.get(0)[0] - releasedAt)).as("from the holder's release to the first waiter's grant")
                    .isLessThan(wakeUp);
            assertThat(Duration.ofNanos(times.get(1)[0] - times.get(0)[1]))
                    .as("from the first waiter's release to the second waiter's grant").isLessThan(wakeUp);
        }
    }

    /** Waiters in the lock's queue, as the server holds it. */
    private static long queued(String key) {
        return RedisOperationCountTest.queued(server, key);
    }

    /** Clients listening on wake channels of the lock (one each, whatever their waiters), as the server counts them. */
    private static long subscribers(String key) {
        return RedisOperationCountTest.wakeChannels(server, RedisKeys.wakeChannel(key)).size();
    }

    @Test
    void a_killed_holders_lock_is_granted_within_the_lease_plus_the_wake_up() throws Exception {
        try (ChildHolder child = ChildHolder.start(uri() + "?lease=" + io.latchkey.spi.Durations.format(LEASE)
                + "&timeout=" + io.latchkey.spi.Durations.format(TIMEOUT));
             LockClient client = client(options())) {
            ChildHolder.Reply got = child.acquire("crash", Duration.ZERO, TIMEOUT.multipliedBy(10));
            assertThat(got.kind()).as("the child's answer: " + got).isEqualTo("acquired");
            CountDownLatch started = new CountDownLatch(1);
            Future<Optional<Lease>> waiter = POOL.submit(() -> {
                started.countDown();
                return client.lock("crash").tryLock(LEASE.multipliedBy(3));
            });
            started.await();
            Thread.sleep(LEASE.toMillis() / 2); // the child renews meanwhile; the kill then falls between renewals
            long killedAt = System.nanoTime();
            child.kill();
            Optional<Lease> lease = waiter.get(LEASE.multipliedBy(4).toMillis(), TimeUnit.MILLISECONDS);
            Duration took = since(killedAt);
            assertThat(lease).isPresent();
            lease.get().close();
            assertThat(took).as("from the kill to the waiter's grant").isLessThan(LEASE.plus(WAKE_UP));
        }
    }

    // ---- one renewer ----

    @Test
    void only_latchkey_renews_its_keys_so_redisson_logs_no_renewal_error_across_a_restart() throws Exception {
        Config config = new Config().setLockWatchdogTimeout(LEASE.toMillis());
        InetSocketAddress a = server.endpoints().get(0);
        config.useSingleServer().setAddress("redis://" + a.getHostString() + ":" + a.getPort());
        RedissonClient redisson = Redisson.create(config);
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(new TeeStream(original, captured), true, StandardCharsets.UTF_8));
        try (LockClient client = RedisLockProvider.client(redisson, options());
             Lease lease = client.lock("one-renewer").lock(Duration.ZERO)) {
            assertThat(redissonRenewals(redisson)).as("keys Redisson's watchdog renews").isEmpty();
            long restartAt = System.nanoTime();
            server.restart();
            Duration restart = since(restartAt);
            // renewals go on past the lease, through the restart
            long end = System.nanoTime() + LEASE.multipliedBy(2).toNanos();
            while (System.nanoTime() < end) {
                Thread.sleep(LEASE.toMillis() / 10); // sampling over time
            }
            // The lease outlives a restart that leaves a renewal time to reach the server again before the
            // deadline: one renewal period and one timeout within lease minus margin. A longer restart (one
            // took 2.6 s on a loaded machine) ends the lease, and that must be signalled, never silent.
            LockOptions o = options();
            Duration renewal = o.lease().minus(o.safetyMargin()).dividedBy(3);
            if (restart.plus(renewal).plus(TIMEOUT).compareTo(o.lease().minus(o.safetyMargin())) < 0) {
                assertThat(lease.isValid()).as("the lease after a restart of %s ms", restart.toMillis()).isTrue();
            } else {
                assertThat(lease.isValid() || lease.lost().toCompletableFuture().isDone())
                        .as("the lease after a restart of %s ms: valid, or its loss signalled", restart.toMillis())
                        .isTrue();
            }
            assertThat(redissonRenewals(redisson)).isEmpty();
        } finally {
            System.setErr(original);
            redisson.shutdown();
        }
        assertThat(captured.toString(StandardCharsets.UTF_8)).doesNotContain("Can't update locks").doesNotContain("ERROR");
    }

    /** The keys Redisson's own lock watchdog renews (its renewal task's entries), read by reflection. */
    private static java.util.Set<String> redissonRenewals(RedissonClient redisson) throws Exception {
        Object scheduler = ((Redisson) redisson).getServiceManager().getRenewalScheduler();
        java.lang.reflect.Field ref = scheduler.getClass().getDeclaredField("reference");
        ref.setAccessible(true);
        Object task = ((java.util.concurrent.atomic.AtomicReference<?>) ref.get(scheduler)).get();
        if (task == null) {
            return java.util.Set.of();
        }
        java.lang.reflect.Field entries = task.getClass().getSuperclass().getDeclaredField("name2entry");
        entries.setAccessible(true);
        return ((java.util.Map<String, ?>) entries.get(task)).keySet();
    }

    // ---- the application's own Redisson client honours the options ----

    @Test
    void a_client_on_the_applications_redisson_honours_lease_margin_timeout_and_namespace() throws Exception {
        Config config = new Config(); // Redisson's own watchdog timeout stays at its 30s default
        InetSocketAddress a = server.endpoints().get(0);
        config.useSingleServer().setAddress("redis://" + a.getHostString() + ":" + a.getPort());
        RedissonClient redisson = Redisson.create(config);
        Duration lease = Duration.ofSeconds(2);
        Duration margin = Duration.ofMillis(500);
        LockOptions options = LockOptions.builder().lease(lease).safetyMargin(margin).timeout(TIMEOUT).namespace("app").build();
        try (LockClient client = RedisLockProvider.client(redisson, options)) {
            try (Lease held = client.lock("own").lock(Duration.ZERO)) {
                long pttl = Long.parseLong(server.cli(List.of(), "PTTL", "app:own"));
                assertThat(pttl).as("the key's life: the lease option").isPositive().isLessThanOrEqualTo(lease.toMillis());
                assertThat(held.remaining()).as("validity: lease minus margin").isLessThanOrEqualTo(lease.minus(margin));
                // kept far past the lease by our renewal alone
                Thread.sleep(lease.multipliedBy(2).toMillis()); // sampling after two leases
                assertThat(held.isValid()).isTrue();
                assertThat(Long.parseLong(server.cli(List.of(), "PTTL", "app:own"))).isPositive().isLessThanOrEqualTo(lease.toMillis());
            }
            server.pause();
            try {
                Duration wait = Duration.ofMillis(500);
                long start = System.nanoTime();
                assertThatThrownBy(() -> client.lock("own").tryLock(wait)).isInstanceOf(LockBackendUnavailableException.class);
                assertThat(since(start)).as("the timeout option bounds a call").isLessThan(wait.plus(TIMEOUT).plus(SLACK));
            } finally {
                server.unpause();
            }
        } finally {
            redisson.shutdown();
        }
    }

    // ---- lease bounds ----

    @Test
    void a_lease_below_the_redis_minimum_is_refused_at_connect_naming_the_minimum() {
        assertThatThrownBy(() -> LockClient.connect(uri() + "?lease=10ms&timeout=5ms"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease=10ms").hasMessageContaining(io.latchkey.spi.Durations.format(RedisLockProvider.MINIMUM_LEASE))
                .hasMessageContaining(uri());
    }

    @Test
    void a_lease_not_longer_than_timeout_plus_margin_is_refused_at_connect() {
        assertThatThrownBy(() -> LockClient.connect(uri() + "?lease=3s&timeout=5s"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease=3s").hasMessageContaining("timeout=5s").hasMessageContaining("safetyMargin=300ms");
        Config config = new Config();
        InetSocketAddress a = server.endpoints().get(0);
        config.useSingleServer().setAddress("redis://" + a.getHostString() + ":" + a.getPort());
        RedissonClient redisson = Redisson.create(config);
        try {
            assertThatThrownBy(() -> RedisLockProvider.client(redisson, LockOptions.builder().lease(Duration.ofSeconds(3)).build()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timeout=5s");
        } finally {
            redisson.shutdown();
        }
    }

    /** Writes to two streams: the test's capture and the console. */
    private static final class TeeStream extends java.io.OutputStream {
        private final java.io.OutputStream a;
        private final java.io.OutputStream b;

        TeeStream(java.io.OutputStream a, java.io.OutputStream b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public synchronized void write(int c) throws java.io.IOException {
            a.write(c);
            b.write(c);
        }

        @Override
        public synchronized void write(byte[] buf, int off, int len) throws java.io.IOException {
            a.write(buf, off, len);
            b.write(buf, off, len);
        }

        @Override
        public void flush() throws java.io.IOException {
            a.flush();
            b.flush();
        }
    }
}
