package io.latchkey.redis;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.LockClients;
import io.latchkey.spi.LockProviderFactory;
import io.latchkey.spi.LockUri;
import io.latchkey.spi.Startup;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.NettyHook;
import org.redisson.config.Config;

/**
 * The Redis provider of Latchkey: {@code redis://}, {@code rediss://} (TLS), {@code redis-sentinel://},
 * {@code redis-cluster://} and {@code rediss-cluster://} (TLS) URIs, served by Redisson; also the entry
 * point for an application that has its own {@link RedissonClient}, of any of these kinds.
 *
 * <p>URIs: {@code redis://[user:password@]host[:6379][/database]},
 * {@code rediss://...} likewise over TLS (trusting the JVM's default trust store, or what the
 * {@code sslTruststore} option names: a PEM file of CA certificates, or a PKCS12 or JKS truststore
 * without password as a file path or URL), and
 * {@code redis-sentinel://[user:password@]host1[:26379],host2[:26379]/masterName[/database]}, where the
 * credentials are those of the Redis nodes, and
 * {@code redis-cluster://[user:password@]host1[:6379],host2[:6379],...} (or {@code rediss-cluster://}
 * over TLS, with {@code sslTruststore} as for {@code rediss://}): seed nodes of a Redis Cluster, from
 * which the client learns every primary and follows failovers and reshardings; a cluster has database
 * 0 only, so the URI has no path. Besides the shared options ({@code lease},
 * {@code safetyMargin}, {@code timeout}, {@code namespace}, which is the key prefix, {@code latchkey} by
 * default) it understands {@code checkLockSyncedSlaves} ({@code true} by default: an acquire fails
 * unless a replica acknowledged it, when the primary has replicas; on a cluster, a replica of the
 * primary that serves the lock's hash slot) and {@code natMap} ({@code redis-sentinel://} and
 * {@code redis-cluster://} only: {@code reportedHost:port=reachableHost:port,...}, for sentinels or
 * cluster nodes that report addresses the client cannot reach, as behind NAT or in containers).
 *
 * <p>Thread-safety: stateless; {@link #connect} and {@link #client} may be called from any thread.
 */
public final class RedisLockProvider implements LockProviderFactory {

    /**
     * The shortest lease this backend accepts: 100 ms. The lease is renewed every
     * {@code (lease - safetyMargin) / 3}, one round trip each, on one scheduler thread; below 100 ms
     * that period falls to tens of milliseconds, where an ordinary JVM pause (a young collection, a
     * busy core) exceeds a whole period, and Redis's own active expiry (ten cycles a second) is no
     * longer finer than the lease. Besides, the lease must be longer than {@code timeout} plus
     * {@code safetyMargin}: a confirmation keeps the lease valid for {@code lease - safetyMargin}, and
     * the next renewal's answer, which may take up to {@code timeout}, must be able to arrive within it.
     */
    public static final Duration MINIMUM_LEASE = Duration.ofMillis(100);

    /** Whether Redisson has connected in this JVM yet: the start-up allowance of connect, see {@link Startup}. */
    private static final Startup STARTUP = new Startup();
    /** The probe's request: {@code PING} in RESP's inline form, which Redis, a sentinel and a cluster node answer. */
    private static final byte[] PING = "PING\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final Duration POLL = Duration.ofMillis(20);

    /** Creates the provider; nothing happens until {@link #connect}. */
    public RedisLockProvider() {
    }

    /**
     * A lock client on the application's own Redisson client, which it uses but never shuts down.
     *
     * <p>The options are honoured as with {@link #connect}: {@code lease} is the time to live of the
     * lock keys, renewed by this library every {@code (lease - safetyMargin) / 3} (locks are taken with
     * an explicit lease time, so Redisson's watchdog and its {@code lockWatchdogTimeout} play no part);
     * {@code safetyMargin} shortens the validity; {@code timeout} bounds each round trip of this
     * library on top of the client's own timeouts; {@code namespace} is the key prefix. A client of a
     * Redis Cluster ({@code useClusterServers()}) gets the cluster's key mapping (see the package
     * documentation); its {@code scanInterval} is the application's, and a short one (a second) lets a
     * lock follow a failover sooner.
     *
     * @throws IllegalArgumentException if an option is unknown or the lease is too short (see {@link #MINIMUM_LEASE})
     */
    public static LockClient client(RedissonClient redisson, LockOptions options) {
        Objects.requireNonNull(redisson, "redisson");
        String where = "the application's Redisson client";
        LockClients.checkOptions(new RedisLockProvider(), options, where);
        checkLease(options, where);
        LockBackend backend = new RedisLockBackend(redisson, false, options, where);
        return LockClients.of("redis", backend, options);
    }

    /** A lock client on the application's own Redisson client, with default options; see {@link #client(RedissonClient, LockOptions)}. */
    public static LockClient client(RedissonClient redisson) {
        return client(redisson, LockOptions.builder().build());
    }

    /** Refuses a lease the renewal cannot keep; see {@link #MINIMUM_LEASE}. */
    static void checkLease(LockOptions options, String where) {
        Duration lease = options.lease();
        if (lease.compareTo(MINIMUM_LEASE) < 0) {
            throw new IllegalArgumentException("lease=" + Durations.format(lease) + " for " + where + " is shorter than the"
                    + " Redis backend's minimum of " + Durations.format(MINIMUM_LEASE) + " (the lease is renewed every"
                    + " (lease - safetyMargin) / 3); use a lease of " + Durations.format(MINIMUM_LEASE) + " or more");
        }
    }

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss", "redis-sentinel", "redis-cluster", "rediss-cluster");
    }

    @Override
    public Set<String> backendOptions() {
        return Set.of(RedisConfigs.CHECK_SYNCED_REPLICAS, RedisConfigs.NAT_MAP, RedisConfigs.SSL_TRUSTSTORE);
    }

    @Override
    public int defaultPort(String scheme) {
        return "redis-sentinel".equals(scheme) ? 26379 : 6379;
    }

    @Override
    public LockBackend connect(LockUri uri, LockOptions options) {
        String where = uri.redacted();
        checkLease(options, "lock URI '" + where + "'");
        Config config = RedisConfigs.build(uri, options);
        Deadline deadline = Deadline.after(options.timeout());
        probe(uri, deadline, options.timeout(), where);
        // Redisson tries a cluster's seeds one after another, a silent one first perhaps, whichever the probe
        // found answering: its own connect ends one timeout after its first connection began (see createOnce)
        Deadline redissonBy = config.isClusterConfig() ? deadline.plus(options.timeout()) : deadline;
        RedissonClient redisson = create(config, options.timeout(), redissonBy, STARTUP.allowance(), where);
        STARTUP.connected();
        return new RedisLockBackend(redisson, true, options, where);
    }

    /**
     * The server's part of connect, timed with this JVM's own sockets: a {@code PING} to each host (the
     * server, the sentinels, the cluster's seeds) until one answers, within {@code timeout}.
     */
    private static void probe(LockUri uri, Deadline deadline, Duration timeout, String where) {
        try {
            Startup.probe(uri.hosts(), deadline, PING, "Redis");
        } catch (Startup.NoAnswer e) {
            if (e.silent()) {
                throw RedisErrors.didNotAnswer(null, where + ": " + e.getMessage(), "while connecting", timeout, null);
            }
            throw new LockBackendUnavailableException(null, "could not reach Redis while connecting (" + where + "): "
                    + e.getMessage(), null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException(null, "interrupted while connecting to " + where, e);
        }
    }

    /**
     * Redisson's connect, once the server answered the probe: within {@code by}, which is what is left
     * of the timeout plus, while Redisson has never connected in this JVM, {@link Startup#ALLOWANCE} for
     * its start-up (class loading, event loops: seconds in a cold JVM on a busy machine). Redisson's own
     * timers (the connect timeout, the response timeout of its handshake) run through that start-up; one
     * that fires while the allowance lasts is this JVM's slowness, not the server's silence, and
     * Redisson is started again, now with its classes loaded. A cluster client tries its seeds one after
     * another: its connect also ends one timeout (plus the allowance) after its first connection began.
     * A client that connects only after we gave up is shut down.
     */
    private static RedissonClient create(Config config, Duration timeout, Deadline deadline, Duration allowance,
            String where) {
        while (true) {
            try {
                return createOnce(config, timeout, deadline.plus(allowance), allowance, where);
            } catch (Retry retry) {
                // Redisson's own timer fired during a cold start: try again while the allowance lasts
            }
        }
    }

    /** Redisson's own timer fired while the start-up allowance lasts. */
    private static final class Retry extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Retry() {
            super(null, null, false, false);
        }
    }

    private static RedissonClient createOnce(Config config, Duration timeout, Deadline by, Duration allowance,
            String where) {
        CompletableFuture<RedissonClient> created = new CompletableFuture<>();
        // A cluster client tries its seeds one after another, each within the connect timeout: the
        // connect ends one timeout after its first connection began, wherever Redisson is in its seed list.
        AtomicLong firstConnectionAt = new AtomicLong();
        if (config.isClusterConfig()) {
            // on top of the hook the configuration has (RedisClosedChannels), which a cluster needs as much
            NettyHook hook = config.getNettyHook();
            config.setNettyHook(new FirstChannel(hook instanceof FirstChannel f ? f.hook : hook, firstConnectionAt));
        }
        Thread connecting = DaemonThreads.factory("latchkey-redis-connect").newThread(() -> {
            try {
                RedissonClient client = Redisson.create(config);
                if (!created.complete(client)) {
                    client.shutdown(0, timeout.toMillis(), TimeUnit.MILLISECONDS); // we gave up on it already
                }
            } catch (Throwable e) {
                created.completeExceptionally(e);
            }
        });
        connecting.start();
        try {
            while (true) {
                long first = firstConnectionAt.get();
                long until = first == 0 ? by.nanoTime()
                        : Math.min(by.nanoTime(), first + timeout.plus(allowance).toNanos());
                long left = until - System.nanoTime();
                if (left <= 0) {
                    throw new TimeoutException();
                }
                try {
                    // polled, as the first connection's time is learnt while waiting
                    return created.get(Math.min(left, POLL.toNanos()), TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    // not yet
                }
            }
        } catch (TimeoutException e) {
            if (created.completeExceptionally(e)) {
                throw RedisErrors.didNotAnswer(null, where, "while connecting", timeout, e);
            }
            return created.join();
        } catch (ExecutionException e) {
            // Redisson's own timeout, counted from a moment in its start-up: the server answered the probe,
            // so while the start-up allowance lasts it gets another go, in a JVM that has loaded Redisson now
            if (RedisErrors.isTimeout(e.getCause()) && by.remainingNanos() > timeout.toNanos()) {
                throw new Retry();
            }
            throw RedisErrors.translate(null, where, "while connecting", timeout, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            created.completeExceptionally(e);
            throw new LockException(null, "interrupted while connecting to " + where, e);
        }
    }

    @Override
    public String toString() {
        return "RedisLockProvider" + schemes();
    }

    /** Notes when a client's first channel began, then hands the channel to {@code hook}. */
    private record FirstChannel(NettyHook hook, AtomicLong at) implements NettyHook {
        @Override
        public void afterBoostrapInitialization(Bootstrap bootstrap) {
            hook.afterBoostrapInitialization(bootstrap);
        }

        @Override
        public void afterChannelInitialization(Channel channel) {
            at.compareAndSet(0, System.nanoTime() | 1);
            hook.afterChannelInitialization(channel);
        }
    }
}
