package io.latchkey.kafka;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.LockClients;
import io.latchkey.spi.LockProviderFactory;
import io.latchkey.spi.LockUri;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Latchkey's Kafka provider: {@code kafka://broker1:9092,broker2:9092?lease=10s&topicPrefix=latchkey.}.
 *
 * <p>Each lock is a topic with exactly one partition, created on first use, and a consumer group of
 * the same name; the member assigned the partition holds the lock. Options beyond the shared ones:
 * {@code topicPrefix} (default {@code latchkey.}; {@code namespace} is taken if it is not set) and
 * {@code replicationFactor} of new lock topics (default: as many brokers as the cluster has, up to
 * 3) and {@code heartbeat} (default a sixth of the lease, at most 1s; it bounds how soon the broker
 * notices a silent holder and how often a contended lock's group rebalances; a waiter takes over a
 * released lock at its next heartbeat, or within a few round trips with {@code handover=rejoin}, see {@link #HANDOVER}). The {@code lease} is the group's {@code session.timeout.ms}, so it must lie within the
 * broker's {@code group.min.session.timeout.ms} (default 6s) and {@code group.max.session.timeout.ms}
 * (default 30m): connect asks a broker for both and refuses a lease outside them, naming the setting
 * and its value. The lease must also be longer than {@code timeout} plus {@code safetyMargin}.
 *
 * <p><b>Security.</b> {@code kafkas://} selects TLS ({@code SSL}, or {@code SASL_SSL} with credentials),
 * trusting the CA certificates of the {@code sslTruststore} option (a PEM file, or a PKCS12 or JKS
 * truststore without password) or else the JVM's default truststore. A user name and password in the
 * URI select SASL with the mechanism of the {@code sasl} option: {@code PLAIN} (the default),
 * {@code SCRAM-SHA-256} or {@code SCRAM-SHA-512}, as in
 * {@code kafkas://alice:secret@broker:9093?sasl=SCRAM-SHA-512&sslTruststore=/etc/kafka/ca.pem}. Refused
 * credentials and a refused TLS handshake fail at connect with a {@link io.latchkey.LockException} that
 * says so; a missing ACL fails the acquire with one naming the refused operation. A lock needs CREATE
 * (unless the topic exists), DESCRIBE, READ and WRITE on topics with the prefix and READ and DESCRIBE
 * on groups with the prefix; DESCRIBE_CONFIGS on the cluster lets connect check the lease against
 * the brokers' session bounds (without it, the first join does). For other mechanisms (Kerberos,
 * OAuth) or client certificates use {@link #newClient(Properties, LockOptions)} with the
 * application's own client settings.
 *
 * <p>Semaphores: {@link LockClient#semaphore} of {@code N} permits is a topic of {@code N} partitions
 * (created on first use; its number of partitions is the semaphore's number of permits, and another
 * number is refused) whose group gives each member at most one partition, the permit's slot; see the
 * package documentation.
 *
 * <p>Fencing tokens are the offsets of marker records each holder appends on grant to the one
 * partition of the token topic {@code <prefix>_tokens} (created on first use like a lock topic and
 * shared by all locks under the prefix): they grow across clients, restarts and deletions of the
 * consumer groups, for as long as that topic lives. Deleting it restarts the offsets, and so the
 * tokens: never delete the token topic while a resource still checks tokens of its locks (or reset
 * that resource too).
 *
 * <p>Thread-safe; the no-argument constructor does nothing, for {@link java.util.ServiceLoader}.
 */
public final class KafkaLockProvider implements LockProviderFactory {

    /** The option naming the prefix of lock topics and group ids. */
    public static final String TOPIC_PREFIX = "topicPrefix";
    /** The option giving the replication factor of new lock topics. */
    public static final String REPLICATION_FACTOR = "replicationFactor";
    /**
     * The option giving the members' heartbeat interval (default a sixth of the lease, at most 1s):
     * the cadence of the holder's confirmations, and of the rebalances of a contended lock's group.
     */
    public static final String HEARTBEAT = "heartbeat";
    /**
     * The option choosing how a waiter learns of a release: {@code heartbeat} (the default) lets it
     * learn at its next heartbeat, as a plain consumer group does; {@code rejoin} parks it in a pending
     * rejoin of the group, so it takes over in a few round trips, at the price of one rebalance per
     * heartbeat interval while the lock is contended and of the holder's lease if another member dies
     * during such a rebalance. The default keeps a running holder safe from a contender that crashes
     * (with {@code latchkey run}, a lost lease stops the command): a lock is a job's, and a job
     * interrupted because another node died is worse than a hand-over a heartbeat later. See the
     * package documentation.
     */
    public static final String HANDOVER = "handover";
    /** {@link #HANDOVER}'s value that parks waiters in a pending rejoin. */
    static final String HANDOVER_REJOIN = "rejoin";
    /** {@link #HANDOVER}'s value that lets a waiter learn of a release at its next heartbeat: the default. */
    static final String HANDOVER_HEARTBEAT = "heartbeat";
    /** The default of {@link #HANDOVER}. */
    static final String DEFAULT_HANDOVER = HANDOVER_HEARTBEAT;
    /**
     * The option choosing the SASL mechanism for the URI's user name and password: {@code PLAIN} (the
     * default), {@code SCRAM-SHA-256} or {@code SCRAM-SHA-512}.
     */
    public static final String SASL = "sasl";
    /**
     * The option naming the truststore for {@code kafkas://}: a PEM file of CA certificates, or a PKCS12
     * or JKS truststore without password; without it the JVM's default truststore is used.
     */
    public static final String SSL_TRUSTSTORE = "sslTruststore";
    private static final Set<String> OPTIONS = Set.of(TOPIC_PREFIX, REPLICATION_FACTOR, HEARTBEAT, HANDOVER, SASL,
            SSL_TRUSTSTORE);
    private static final Set<String> MECHANISMS = Set.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512");
    static final String DEFAULT_PREFIX = "latchkey.";

    public KafkaLockProvider() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("kafka", "kafkas");
    }

    @Override
    public Set<String> backendOptions() {
        return OPTIONS;
    }

    @Override
    public int defaultPort(String scheme) {
        return 9092;
    }

    @Override
    public LockBackend connect(LockUri uri, LockOptions options) {
        Map<String, Object> config = new HashMap<>();
        config.put("bootstrap.servers", uri.hosts().stream().map(LockUri.HostAndPort::toString)
                .collect(Collectors.joining(",")));
        config.putAll(securityConfig(uri, options));
        return backend(config, options);
    }

    /**
     * The Kafka client's security settings for a URI: {@code kafkas://} selects TLS, a user name
     * selects SASL with the {@code sasl} option's mechanism.
     */
    static Map<String, Object> securityConfig(LockUri uri, LockOptions options) {
        boolean tls = uri.scheme().equals("kafkas");
        boolean sasl = options.username() != null;
        String mechanism = options.backendOption(SASL, null);
        String truststore = options.backendOption(SSL_TRUSTSTORE, null);
        if (mechanism != null && !sasl) {
            throw new IllegalArgumentException("option '" + SASL + "=" + mechanism + "' in lock URI '" + uri.redacted()
                    + "' needs a user name and password, as in kafka://user:password@host:9092?" + SASL + "=" + mechanism);
        }
        if (mechanism != null && !MECHANISMS.contains(mechanism.trim().toUpperCase(Locale.ROOT))) {
            throw new IllegalArgumentException("bad value '" + mechanism + "' for option '" + SASL + "' in lock URI '"
                    + uri.redacted() + "': write one of PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512");
        }
        if (truststore != null && !tls) {
            throw new IllegalArgumentException("option '" + SSL_TRUSTSTORE + "' needs TLS: write kafkas:// instead of "
                    + uri.scheme() + ":// in lock URI '" + uri.redacted() + "'");
        }
        Map<String, Object> config = new HashMap<>();
        config.put("security.protocol", (sasl ? "SASL_" : "") + (tls ? "SSL" : "PLAINTEXT"));
        if (sasl) {
            String m = mechanism == null ? "PLAIN" : mechanism.trim().toUpperCase(Locale.ROOT);
            String module = m.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                    : "org.apache.kafka.common.security.scram.ScramLoginModule";
            config.put("sasl.mechanism", m);
            config.put("sasl.jaas.config", module + " required username=\"" + jaasEscape(options.username())
                    + "\" password=\"" + jaasEscape(Objects.toString(options.password(), "")) + "\";");
        }
        if (truststore != null) {
            Path path = Paths.get(truststore);
            if (!Files.isReadable(path)) {
                throw new IllegalArgumentException("option '" + SSL_TRUSTSTORE + "' in lock URI '" + uri.redacted()
                        + "' names no readable file: '" + truststore + "'; give a PEM file of CA certificates or a"
                        + " PKCS12 or JKS truststore without password");
            }
            config.put("ssl.truststore.location", path.toAbsolutePath().toString());
            config.put("ssl.truststore.type", truststoreType(path));
        }
        return config;
    }

    private static String truststoreType(Path path) {
        try (InputStream in = Files.newInputStream(path)) {
            byte[] head = in.readNBytes(64);
            if (new String(head, StandardCharsets.ISO_8859_1).contains("-----BEGIN")) {
                return "PEM";
            }
            // JKS files start with the magic number FEEDFEED; anything else is taken as PKCS12
            return head.length >= 4 && (head[0] & 0xff) == 0xFE && (head[1] & 0xff) == 0xED ? "JKS" : "PKCS12";
        } catch (IOException e) {
            throw new IllegalArgumentException("option '" + SSL_TRUSTSTORE + "': cannot read '" + path + "': " + e.getMessage(), e);
        }
    }

    /**
     * A lock client on the application's own Kafka client settings ({@code bootstrap.servers} and
     * security settings included); closing it closes the Kafka clients it made from them.
     *
     * @throws IllegalArgumentException if {@code bootstrap.servers} is missing or an option is bad
     * @throws io.latchkey.LockBackendUnavailableException if no broker answers within the timeout
     */
    public static LockClient newClient(Properties kafkaProperties, LockOptions options) {
        Objects.requireNonNull(kafkaProperties, "kafkaProperties");
        LockClients.checkOptions(new KafkaLockProvider(), options, "the application's Kafka properties");
        Map<String, Object> config = new HashMap<>();
        kafkaProperties.forEach((k, v) -> config.put(String.valueOf(k), v));
        Object servers = config.get("bootstrap.servers");
        if (servers == null || String.valueOf(servers).isBlank()) {
            throw new IllegalArgumentException("kafka properties must set bootstrap.servers, like broker1:9092,broker2:9092");
        }
        return LockClients.of("kafka", backend(config, options), options);
    }

    private static KafkaLockBackend backend(Map<String, Object> config, LockOptions options) {
        String prefix = options.backendOption(TOPIC_PREFIX, options.namespace() != null ? options.namespace() : DEFAULT_PREFIX);
        TopicNames.validatePrefix(prefix);
        int rf = 0;
        String given = options.backendOption(REPLICATION_FACTOR, null);
        if (given != null) {
            try {
                rf = Integer.parseInt(given.trim());
            } catch (NumberFormatException e) {
                rf = -1;
            }
            if (rf < 1 || rf > Short.MAX_VALUE) {
                throw new IllegalArgumentException("bad value '" + given + "' for option " + REPLICATION_FACTOR
                        + ": write a whole number of at least 1, at most the number of brokers");
            }
        }
        // heartbeat and handover are read and checked by the backend, before it connects
        return new KafkaLockBackend(config, options, prefix, rf);
    }

    private static String jaasEscape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
