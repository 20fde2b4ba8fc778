package io.latchkey.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.Durations;
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
 * namespace too) as one key per contender, bound to the client's one etcd lease: see
 * {@link EtcdLockBackend} for the algorithm, its guarantees and what each lock costs.
 *
 * <p>How the options map onto etcd:
 * <ul>
 *   <li>{@code lease} is the failover bound: a holder that dies loses its lock within {@code lease}.
 *       etcd counts lease TTLs in whole seconds and its leader looks for expired leases only every
 *       {@value #EXPIRY_CHECK_MILLIS} ms, so a key outlives its TTL by up to that much. The TTL asked
 *       for is therefore the whole seconds of {@code lease} minus {@value #EXPIRY_CHECK_MILLIS} ms,
 *       rounded down ({@code lease=6s} asks for 5 s, {@code lease=1500ms} for 1 s), so that the key is
 *       gone within {@code lease} after the last keepalive. A lease that leaves less than one second
 *       is refused, and so is one whose TTL etcd would raise: etcd grants no TTL below its own minimum
 *       (1.5 × its {@code --election-timeout}, rounded up to whole seconds: 2 s with the default
 *       1000 ms), and {@link #connect} and {@link #client} ask the server and refuse with a message
 *       that names that minimum. The validity deadline runs from the TTL the server reports, never
 *       from the one asked for.</li>
 *   <li>{@code safetyMargin} is subtracted from every validity deadline; {@code lease} must be longer
 *       than {@code timeout} plus {@code safetyMargin}, so that a keepalive answered late still renews
 *       a valid lease.</li>
 *   <li>{@code timeout} bounds every call to etcd, and {@code connect}: a probe with the JDK's own
 *       sockets must be answered within it; the client's own start-up (class loading, the first
 *       channel) is not charged to the server but gets a stated allowance, see
 *       {@link io.latchkey.spi.Startup}.</li>
 *   <li>{@code namespace} is the key prefix (default {@value #DEFAULT_NAMESPACE}).</li>
 * </ul>
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

    /**
     * How often, in milliseconds, the etcd leader revokes the leases that have expired (the lessor's
     * run loop in etcd 3.4 and later): a key lives up to this long after its lease's TTL ran out.
     */
    public static final long EXPIRY_CHECK_MILLIS = 500;

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
        long ttl = ttlSeconds(options, uri.redacted());
        if (options.username() != null && options.password() == null) {
            throw new IllegalArgumentException("etcd user '" + options.username() + "' needs a password: write "
                    + uri.scheme() + "://user:password@host:2379");
        }
        List<URI> endpoints = uri.hosts().stream()
                .map(h -> URI.create((uri.scheme().equals("etcds") ? "https://" : "http://") + h))
                .collect(Collectors.toList());
        long retryDelay = Math.max(1, Math.min(500, options.timeout().toMillis() / 10));
        // a Vert.x of our own, so that closing can wait until its event loop threads are gone
        Vertx vertx = Vertx.vertx(new VertxOptions().setUseDaemonThread(true));
        Client client;
        try {
            ClientBuilder builder = Client.builder()
                    .endpoints(endpoints)
                    .vertx(vertx)
                    .connectTimeout(options.timeout())
                    .retryMaxDuration(options.timeout())
                    // jetcd's retry policy refuses a max duration not above its first delay (500 ms by default)
                    .retryDelay(retryDelay)
                    .retryMaxDelay(Math.max(retryDelay + 1, Math.min(2500, options.timeout().toMillis() / 2)))
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
            backend.probe(uri.hosts());
        } catch (RuntimeException e) {
            backend.close();
            throw e;
        }
        return backend;
    }

    /**
     * A {@link LockClient} on a jetcd {@link Client} the application already has. Closing the lock client
     * releases its locks and stops its own threads but leaves {@code etcd} open. The client's own
     * settings (endpoints, credentials, TLS, jetcd namespace) apply; {@code options} supply
     * {@code lease}, {@code safetyMargin}, {@code timeout} and the Latchkey {@code namespace}, with the
     * same checks as {@link LockClient#connect}: this method asks etcd once, within {@code timeout},
     * whether it answers and grants the lease's TTL.
     *
     * @throws IllegalArgumentException if an option is bad or the lease is below etcd's minimum TTL
     * @throws io.latchkey.LockBackendUnavailableException if etcd does not answer within {@code timeout}
     */
    public static LockClient client(Client etcd, LockOptions options) {
        Objects.requireNonNull(etcd, "etcd client");
        String where = "the endpoints of the application's etcd client";
        LockClients.checkOptions(new EtcdLockProvider(), options, where);
        String namespace = namespace(options.namespace());
        EtcdLockBackend backend = new EtcdLockBackend(etcd, null, false, namespace, ttlSeconds(options, where), options,
                where);
        try {
            backend.probe(null);
        } catch (RuntimeException e) {
            backend.close();
            throw e;
        }
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
        return namespace(options.namespace() != null ? options.namespace() : hasPath ? path : null);
    }

    /** The key prefix of namespace {@code given}, ending in a slash; {@link #DEFAULT_NAMESPACE} if none is given. */
    private static String namespace(String given) {
        return given == null ? DEFAULT_NAMESPACE : withSlash(given);
    }

    private static String withSlash(String namespace) {
        return namespace.endsWith("/") ? namespace : namespace + '/';
    }

    /**
     * The TTL to ask etcd for: the whole seconds of {@code lease} minus the expiry check period, so that
     * the key is gone within {@code lease} after the last renewal; see the class javadoc.
     *
     * @throws IllegalArgumentException if that leaves less than a second (the shared layer has already
     *     refused a lease not longer than {@code timeout} plus {@code safetyMargin})
     */
    static long ttlSeconds(LockOptions options, String where) {
        Duration lease = options.lease();
        long ttl = (lease.toMillis() - EXPIRY_CHECK_MILLIS) / 1000;
        if (ttl < 1) {
            throw new IllegalArgumentException("lease=" + Durations.format(lease) + " is too short for etcd (" + where
                    + "): etcd lease TTLs are whole seconds and etcd expires a lease up to " + EXPIRY_CHECK_MILLIS
                    + "ms after its TTL, so a lease that is to end within lease=" + Durations.format(lease)
                    + " leaves a TTL of 0s; use lease=" + (1000 + EXPIRY_CHECK_MILLIS) + "ms or more (etcd's own"
                    + " minimum TTL, 2s by default, may ask for more)");
        }
        return ttl;
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
