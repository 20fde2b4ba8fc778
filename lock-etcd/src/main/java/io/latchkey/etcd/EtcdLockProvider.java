package io.latchkey.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.LockClients;
import io.latchkey.spi.LockProviderFactory;
import io.latchkey.spi.LockUri;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.io.File;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import javax.net.ssl.SSLException;

/**
 * The etcd provider of Latchkey: URIs {@code etcd://host1:2379,host2:2379?namespace=/locks/&lease=10s}
 * and {@code etcds://...?cacert=/path/ca.pem} for TLS (without {@code cacert}, the JVM's default trust
 * store decides), with {@code user:password@} in the URI when etcd has authentication enabled.
 *
 * <p>Locks live under the namespace (default {@value #DEFAULT_NAMESPACE}; a URI path, if given, is the
 * namespace too) as one key per contender, bound to the contender's etcd lease: see
 * {@link EtcdLockBackend} for the algorithm and its guarantees. The {@code lease} option is the etcd
 * lease TTL and must be a whole number of seconds, as etcd counts TTLs in seconds.
 *
 * <p>The client connects only to the endpoints given; jetcd does not discover other members.
 * Thread-safe and stateless; {@link #client(Client, LockOptions)} wraps a jetcd {@link Client} the
 * application already has.
 */
public final class EtcdLockProvider implements LockProviderFactory {

    /** The namespace used when none is given. */
    public static final String DEFAULT_NAMESPACE = "/latchkey/";

    /** The option naming a PEM file of CA certificates to trust for {@code etcds://}, like etcdctl's {@code --cacert}. */
    public static final String CACERT = "cacert";

    /** A public no-argument constructor for {@link java.util.ServiceLoader}; it does nothing. */
    public EtcdLockProvider() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("etcd", "etcds");
    }

    @Override
    public Set<String> backendOptions() {
        return Set.of(CACERT);
    }

    @Override
    public int defaultPort(String scheme) {
        return 2379;
    }

    @Override
    public LockBackend connect(LockUri uri, LockOptions options) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(options, "options");
        File cacert = cacert(uri, options);
        String namespace = namespace(uri, options);
        long ttl = ttlSeconds(options.lease());
        if (options.username() != null && options.password() == null) {
            throw new IllegalArgumentException("etcd user '" + options.username() + "' needs a password: write "
                    + uri.scheme() + "://user:password@host:2379");
        }
        List<URI> endpoints = uri.hosts().stream()
                .map(h -> URI.create((uri.scheme().equals("etcds") ? "https://" : "http://") + h))
                .collect(Collectors.toList());
        // a Vert.x of our own, so that closing can wait until its event loop threads are gone
        Vertx vertx = Vertx.vertx(new VertxOptions().setUseDaemonThread(true));
        Client client;
        try {
            ClientBuilder builder = Client.builder()
                    .endpoints(endpoints)
                    .vertx(vertx)
                    .connectTimeout(options.timeout())
                    .retryMaxDuration(options.timeout())
                    // fail fast while the channel is down instead of waiting for it: the reason (refused,
                    // TLS handshake) reaches the caller, and acquire retries within the caller's wait
                    .waitForReady(false);
            if (options.username() != null) {
                builder.user(bytes(options.username())).password(bytes(options.password()));
            }
            if (uri.scheme().equals("etcds")) {
                builder.sslContext(ssl -> {
                    if (cacert != null) {
                        ssl.trustManager(cacert);
                    }
                });
            }
            client = builder.build();
        } catch (SSLException e) {
            vertx.close();
            throw new IllegalArgumentException("cannot set up TLS for " + uri.redacted() + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            vertx.close();
            throw e;
        }
        EtcdLockBackend backend = new EtcdLockBackend(client, vertx, true, namespace, ttl, options, uri.redacted());
        try {
            backend.probe();
        } catch (RuntimeException e) {
            backend.close();
            throw e;
        }
        return backend;
    }

    /**
     * A {@link LockClient} on a jetcd {@link Client} the application already has. Closing the lock client
     * releases its locks and stops its own threads but leaves {@code etcd} open. The client's own
     * settings (endpoints, credentials, TLS, jetcd namespace) apply; {@code options} supply the lease,
     * timeout and Latchkey namespace.
     */
    public static LockClient client(Client etcd, LockOptions options) {
        Objects.requireNonNull(etcd, "etcd client");
        LockClients.checkOptions(new EtcdLockProvider(), options, "the application's etcd client");
        String namespace = options.namespace() == null ? DEFAULT_NAMESPACE : withSlash(options.namespace());
        EtcdLockBackend backend = new EtcdLockBackend(etcd, null, false, namespace, ttlSeconds(options.lease()), options,
                "the application's etcd client");
        return LockClients.of("etcd", backend, options);
    }

    private static File cacert(LockUri uri, LockOptions options) {
        String path = options.backendOption(CACERT, null);
        if (path == null) {
            return null;
        }
        if (!uri.scheme().equals("etcds")) {
            throw new IllegalArgumentException("option '" + CACERT + "' needs TLS: write etcds:// instead of "
                    + uri.scheme() + ":// in " + uri.redacted());
        }
        File file = new File(path);
        if (!file.isFile() || !file.canRead()) {
            throw new IllegalArgumentException("option '" + CACERT + "' names no readable file: '" + path + "' in "
                    + uri.redacted());
        }
        return file;
    }

    private static String namespace(LockUri uri, LockOptions options) {
        String path = uri.path();
        boolean hasPath = !path.isEmpty() && !path.equals("/");
        if (options.namespace() != null && hasPath && !withSlash(path).equals(withSlash(options.namespace()))) {
            throw new IllegalArgumentException("the path '" + path + "' and the namespace option '" + options.namespace()
                    + "' of " + uri.redacted() + " disagree; give the namespace once");
        }
        if (options.namespace() != null) {
            return withSlash(options.namespace());
        }
        return hasPath ? withSlash(path) : DEFAULT_NAMESPACE;
    }

    private static String withSlash(String namespace) {
        return namespace.endsWith("/") ? namespace : namespace + '/';
    }

    static long ttlSeconds(Duration lease) {
        if (lease.toNanos() % 1_000_000_000L != 0) {
            throw new IllegalArgumentException("lease " + lease + " is not a whole number of seconds: etcd lease TTLs"
                    + " are whole seconds; write lease=" + Math.max(1, lease.getSeconds()) + "s or lease="
                    + (lease.getSeconds() + 1) + "s");
        }
        return lease.getSeconds();
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
