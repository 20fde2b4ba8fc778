package io.latchkey.redis;

import io.latchkey.LockOptions;
import io.latchkey.spi.LockUri;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import javax.net.ssl.TrustManagerFactory;
import org.redisson.config.BaseConfig;
import org.redisson.config.ClusterServersConfig;
import org.redisson.config.Config;
import org.redisson.config.EqualJitterDelay;
import org.redisson.config.ReadMode;
import org.redisson.config.SentinelServersConfig;
import org.redisson.config.SingleServerConfig;

/**
 * Turns a lock URI and options into a Redisson {@link Config}; Redisson's failures are told by
 * {@link RedisErrors}. Stateless.
 */
final class RedisConfigs {

    static final String NAT_MAP = "natMap";
    static final String CHECK_SYNCED_REPLICAS = "checkLockSyncedSlaves";
    static final String SSL_TRUSTSTORE = "sslTruststore";

    /** How often a cluster client asks for the cluster's topology ({@code CLUSTER NODES}). */
    static final int CLUSTER_SCAN_MILLIS = 1000;

    /**
     * The longest pause between two attempts to reconnect a lost connection: well within the waiter's
     * wake-up (250 ms, docs/contract.md), because a waiter's subscription comes back only with its
     * connection, and a release published before that is not heard.
     */
    static final Duration RECONNECT_DELAY = Duration.ofMillis(100);

    private RedisConfigs() {
    }

    static Config build(LockUri uri, LockOptions options) {
        int timeoutMs = (int) Math.min(Integer.MAX_VALUE, Math.max(1, options.timeout().toMillis()));
        Config config = new Config()
                // Our locks are taken with an explicit lease time, so Redisson's watchdog never runs for them;
                // set all the same for anything else the application does with a client we made.
                .setLockWatchdogTimeout(options.lease().toMillis())
                .setCheckLockSyncedSlaves(bool(options, CHECK_SYNCED_REPLICAS, true, uri))
                // WAIT for replicas is part of an acquire, so it must fit in one round trip's bound.
                .setSlavesSyncTimeout(Math.min(1000, timeoutMs))
                // Redisson's defaults (32 event loop threads, 16 executor threads) suit a data cache, not a lock client.
                .setNettyThreads(4)
                .setThreads(2)
                .setNettyHook(new RedisClosedChannels());
        BaseConfig<?> servers;
        switch (uri.scheme()) {
            case "redis":
            case "rediss": {
                if (uri.hosts().size() != 1) {
                    throw new IllegalArgumentException("lock URI '" + uri.redacted() + "' names " + uri.hosts().size()
                            + " hosts; " + uri.scheme() + ":// takes one; use redis-sentinel://host1:26379,host2:26379/masterName"
                            + " for sentinels, redis-cluster://host1:6379,host2:6379 for a Redis Cluster");
                }
                if (options.backendOptions().containsKey(NAT_MAP)) {
                    throw new IllegalArgumentException("option '" + NAT_MAP + "' in lock URI '" + uri.redacted()
                            + "' applies to redis-sentinel:// and redis-cluster:// only");
                }
                SingleServerConfig single = config.useSingleServer()
                        .setAddress(uri.scheme() + "://" + uri.hosts().get(0))
                        .setDatabase(database(uri.path(), uri))
                        .setConnectionMinimumIdleSize(1)
                        .setConnectionPoolSize(16)
                        .setSubscriptionConnectionMinimumIdleSize(1)
                        .setSubscriptionConnectionPoolSize(8);
                servers = single;
                break;
            }
            case "redis-sentinel": {
                String path = uri.path().startsWith("/") ? uri.path().substring(1) : uri.path();
                String[] parts = path.split("/", -1);
                if (parts[0].isEmpty() || parts.length > 2) {
                    throw new IllegalArgumentException("lock URI '" + uri.redacted() + "' needs the master name as its path,"
                            + " like redis-sentinel://host1:26379,host2:26379/mymaster (optionally /mymaster/<database>)");
                }
                SentinelServersConfig sentinel = config.useSentinelServers()
                        .setMasterName(parts[0])
                        .setDatabase(parts.length == 2 ? database(parts[1], uri) : 0)
                        // Locks are written and read on the primary only; replicas are not needed for reads.
                        .setReadMode(ReadMode.MASTER)
                        .setMasterConnectionMinimumIdleSize(1)
                        .setMasterConnectionPoolSize(16)
                        .setSlaveConnectionMinimumIdleSize(1)
                        .setSubscriptionConnectionMinimumIdleSize(1)
                        .setSubscriptionConnectionPoolSize(8);
                for (LockUri.HostAndPort host : uri.hosts()) {
                    sentinel.addSentinelAddress("redis://" + host);
                }
                String nat = options.backendOption(NAT_MAP, null);
                if (nat != null) {
                    sentinel.setNatMapper(natMapper(nat, uri));
                }
                servers = sentinel;
                break;
            }
            case "redis-cluster":
            case "rediss-cluster": {
                String path = uri.path().startsWith("/") ? uri.path().substring(1) : uri.path();
                if (!path.isEmpty()) {
                    throw new IllegalArgumentException("lock URI '" + uri.redacted() + "' has the path '/" + path + "', but a"
                            + " Redis Cluster has database 0 only; write " + uri.scheme() + "://host1:6379,host2:6379 without a path");
                }
                String scheme = uri.scheme().equals("rediss-cluster") ? "rediss://" : "redis://";
                ClusterServersConfig cluster = config.useClusterServers()
                        // Locks are written and read on the primaries only; replicas are not needed for reads.
                        .setReadMode(ReadMode.MASTER)
                        // A failover or a resharding is learnt from the next scan (or a MOVED answer): scan
                        // often, so that a promoted replica serves the lock soon after it was elected.
                        .setScanInterval(CLUSTER_SCAN_MILLIS)
                        .setMasterConnectionMinimumIdleSize(1)
                        .setMasterConnectionPoolSize(16)
                        .setSlaveConnectionMinimumIdleSize(1)
                        .setSubscriptionConnectionMinimumIdleSize(1)
                        .setSubscriptionConnectionPoolSize(8);
                for (LockUri.HostAndPort host : uri.hosts()) {
                    cluster.addNodeAddress(scheme + host);
                }
                String nat = options.backendOption(NAT_MAP, null);
                if (nat != null) {
                    cluster.setNatMapper(natMapper(nat, uri));
                }
                servers = cluster;
                break;
            }
            default:
                throw new IllegalArgumentException("the Redis backend does not serve scheme '" + uri.scheme()
                        + "' of lock URI '" + uri.redacted() + "'; use redis://, rediss://, redis-sentinel://,"
                        + " redis-cluster:// or rediss-cluster://");
        }
        String truststore = options.backendOption(SSL_TRUSTSTORE, null);
        if (truststore != null) {
            if (!uri.scheme().equals("rediss") && !uri.scheme().equals("rediss-cluster")) {
                throw new IllegalArgumentException("option '" + SSL_TRUSTSTORE + "' in lock URI '" + uri.redacted()
                        + "' applies to rediss:// and rediss-cluster:// only");
            }
            trust(servers, truststore, uri);
        }
        if (options.username() != null) {
            config.setUsername(options.username());
        }
        if (options.password() != null) {
            config.setPassword(options.password());
        }
        // Connecting makes retryAttempts + 1 attempts, each bounded by connectTimeout: one attempt with
        // most of the timeout fits the bound of connect (a cold JVM's first handshake, class loading
        // inside Redisson's timer, is started again by RedisLockProvider within its start-up allowance). Our own calls wait on their own bounds and are
        // retried by the caller, so Redisson's retries of commands are not needed either.
        // A cluster client tries its seed nodes one after another until one answers, each within the
        // connect timeout: a refused or unresolvable seed fails at once, a silent one costs the attempt's
        // time, and the connect of RedisLockProvider gives up one timeout after the first seed was tried.
        servers.setTimeout(timeoutMs)
                .setConnectTimeout(Math.max(1, timeoutMs * 4 / 5))
                .setRetryAttempts(0)
                // A lost connection, a waiter's subscription with it, is reconnected by Redisson on its own
                // schedule, and a release published before that wakes nobody. Redisson's default backs off
                // up to 10 s, so after an outage of some seconds a waiter was woken seconds after the server
                // served again. Attempts 50 to 100 ms apart (jittered, so that clients do not all come back
                // at once) keep that within the wake-up; an attempt on a server that is down is a refused
                // connect, or a connection closed at once (RedisClosedChannels), or one that is silent
                // until the connect timeout.
                .setReconnectionDelay(new EqualJitterDelay(RECONNECT_DELAY, RECONNECT_DELAY))
                .setClientName("latchkey");
        return config;
    }

    /**
     * Trusts the certificates of a PEM file (such as the {@code ca.crt} a Redis server's certificate was
     * signed with), or a PKCS12 or JKS truststore without password given as a file path or URL.
     */
    private static void trust(BaseConfig<?> servers, String value, LockUri uri) {
        String option = "option '" + SSL_TRUSTSTORE + "' in lock URI '" + uri.redacted() + "'";
        String rule = " must be a PEM file of CA certificates, or the file path or URL of a PKCS12 or JKS"
                + " truststore without password: '" + value + "'";
        try {
            boolean url = value.matches("[A-Za-z][A-Za-z0-9+.-]+:.*") && !value.matches("[A-Za-z]:[\\\\/].*");
            if (url && !value.startsWith("file:")) {
                servers.setSslTruststore(new URL(value)); // classpath:, http: and the like: read by Redisson
                return;
            }
            Path path = url ? Path.of(java.net.URI.create(value)) : Path.of(value);
            if (!Files.isReadable(path)) {
                throw new IllegalArgumentException(option + " names the file '" + value
                        + "', which does not exist or cannot be read");
            }
            byte[] content = Files.readAllBytes(path);
            if (!new String(content, StandardCharsets.US_ASCII).contains("-----BEGIN CERTIFICATE-----")) {
                servers.setSslTruststore(path.toUri().toURL());
                return;
            }
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int n = 0;
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(content))) {
                store.setCertificateEntry("ca-" + n++, c);
            }
            TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            factory.init(store);
            servers.setSslTrustManagerFactory(factory);
        } catch (IOException | GeneralSecurityException | InvalidPathException e) {
            throw new IllegalArgumentException(option + rule + " (" + e.getMessage() + ")", e);
        }
    }

    private static int database(String path, LockUri uri) {
        String db = path.startsWith("/") ? path.substring(1) : path;
        if (db.isEmpty()) {
            return 0;
        }
        try {
            int n = Integer.parseInt(db);
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("bad database '" + db + "' in lock URI '" + uri.redacted()
                + "': the path of a redis URI is a database number from 0, like redis://host:6379/2");
    }

    private static boolean bool(LockOptions options, String name, boolean defaultValue, LockUri uri) {
        String v = options.backendOption(name, null);
        if (v == null) {
            return defaultValue;
        }
        switch (v.toLowerCase(Locale.ROOT)) {
            case "true":
                return true;
            case "false":
                return false;
            default:
                throw new IllegalArgumentException("option '" + name + "' in lock URI '" + uri.redacted()
                        + "' must be true or false: '" + v + "'");
        }
    }

    /** Parses {@code host:port=host:port,...}: sentinel-reported address to reachable address. */
    static org.redisson.config.HostPortNatMapper natMapper(String value, LockUri uri) {
        Map<String, String> map = new LinkedHashMap<>();
        for (String pair : value.split(",")) {
            String[] sides = pair.trim().split("=", -1);
            if (sides.length != 2 || !hostPort(sides[0]) || !hostPort(sides[1])) {
                throw new IllegalArgumentException("bad entry '" + pair + "' in option '" + NAT_MAP + "' of lock URI '"
                        + uri.redacted() + "': write reported-host:port=reachable-host:port, comma separated");
            }
            map.put(sides[0].trim(), sides[1].trim());
        }
        org.redisson.config.HostPortNatMapper mapper = new org.redisson.config.HostPortNatMapper();
        mapper.setHostsPortMap(map);
        return mapper;
    }

    private static boolean hostPort(String s) {
        int colon = s.trim().lastIndexOf(':');
        if (colon <= 0) {
            return false;
        }
        try {
            int port = Integer.parseInt(s.trim().substring(colon + 1));
            return port > 0 && port < 65536;
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
