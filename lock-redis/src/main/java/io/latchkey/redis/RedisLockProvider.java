package io.latchkey.redis;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.LockClients;
import io.latchkey.spi.LockProviderFactory;
import io.latchkey.spi.LockUri;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Redis provider of Latchkey: {@code redis://}, {@code rediss://} (TLS) and {@code redis-sentinel://}
 * URIs, served by Redisson; also the entry point for an application that has its own
 * {@link RedissonClient}.
 *
 * <p>URIs: {@code redis://[user:password@]host[:6379][/database]},
 * {@code rediss://...} likewise over TLS (trusting the JVM's default trust store, or what the
 * {@code sslTruststore} option names: a PEM file of CA certificates, or a PKCS12 or JKS truststore
 * without password as a file path or URL), and
 * {@code redis-sentinel://[user:password@]host1[:26379],host2[:26379]/masterName[/database]}, where the
 * credentials are those of the Redis nodes. Besides the shared options ({@code lease},
 * {@code safetyMargin}, {@code timeout}, {@code namespace}, which is the key prefix, {@code latchkey} by
 * default) it understands {@code checkLockSyncedSlaves} ({@code true} by default: an acquire fails
 * unless a replica acknowledged it, when the primary has replicas) and {@code natMap}
 * ({@code redis-sentinel://} only: {@code reportedHost:port=reachableHost:port,...}, for sentinels that
 * report addresses the client cannot reach, as behind NAT or in containers).
 *
 * <p>Thread-safety: stateless; {@link #connect} and {@link #client} may be called from any thread.
 */
public final class RedisLockProvider implements LockProviderFactory {

    private static final Logger log = LoggerFactory.getLogger(RedisLockProvider.class);

    /** Creates the provider; nothing happens until {@link #connect}. */
    public RedisLockProvider() {
    }

    /**
     * A lock client on the application's own Redisson client, which it uses but never shuts down.
     *
     * <p>The lease is that client's {@code lockWatchdogTimeout} (Redisson's renewal period is a third of
     * it): {@code options.lease()} is not used, and {@code options.timeout()} bounds each round trip of
     * this library on top of the client's own timeouts.
     *
     * @throws IllegalArgumentException if the safety margin is not shorter than the watchdog timeout
     */
    public static LockClient client(RedissonClient redisson, LockOptions options) {
        Objects.requireNonNull(redisson, "redisson");
        LockClients.checkOptions(new RedisLockProvider(), options, "the application's Redisson client");
        long watchdog = redisson.getConfig().getLockWatchdogTimeout();
        if (options.safetyMargin().compareTo(Duration.ofMillis(watchdog)) >= 0) {
            throw new IllegalArgumentException("safety margin must be shorter than the Redisson client's"
                    + " lockWatchdogTimeout, which is the lease: safetyMargin=" + options.safetyMargin()
                    + ", lockWatchdogTimeout=" + watchdog + "ms");
        }
        if (options.lease().toMillis() != watchdog) {
            log.info("lock client on an application's Redisson client: the lease is its lockWatchdogTimeout ({} ms),"
                    + " not the lease option ({})", watchdog, options.lease());
        }
        RedisLockBackend backend = new RedisLockBackend(redisson, false, options.namespace(), options.timeout(),
                options.safetyMargin());
        return LockClients.of("redis", backend, options.toBuilder().lease(backend.lease()).build());
    }

    /** A lock client on the application's own Redisson client, with default options; see {@link #client(RedissonClient, LockOptions)}. */
    public static LockClient client(RedissonClient redisson) {
        Objects.requireNonNull(redisson, "redisson");
        long watchdog = redisson.getConfig().getLockWatchdogTimeout();
        return client(redisson, LockOptions.builder().lease(Duration.ofMillis(watchdog)).build());
    }

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss", "redis-sentinel");
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
        Config config = RedisConfigs.build(uri, options);
        RedissonClient redisson;
        try {
            redisson = Redisson.create(config);
        } catch (RuntimeException e) {
            throw RedisConfigs.translate(null, uri.redacted(), "while connecting", e);
        }
        return new RedisLockBackend(redisson, true, options.namespace(), options.timeout(), options.safetyMargin());
    }

    @Override
    public String toString() {
        return "RedisLockProvider" + schemes();
    }
}
