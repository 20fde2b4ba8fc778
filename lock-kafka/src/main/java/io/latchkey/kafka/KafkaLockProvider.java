package io.latchkey.kafka;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.LockClients;
import io.latchkey.spi.LockProviderFactory;
import io.latchkey.spi.LockUri;
import java.time.Duration;
import java.util.HashMap;
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
 * 3) and {@code heartbeat} (default a sixth of the lease, at most 1s; a waiter takes over a released
 * lock at its next heartbeat). The {@code lease} is the group's {@code session.timeout.ms}, so it must lie within the
 * broker's {@code group.min.session.timeout.ms} (default 6s) and {@code group.max.session.timeout.ms}.
 * A user name and password in the URI select SASL/PLAIN over plain text; for TLS or other mechanisms
 * use {@link #newClient(Properties, LockOptions)} with the application's own client settings.
 *
 * <p>Fencing tokens are the offsets of marker records each holder appends to the lock's partition on
 * grant: they grow across clients, restarts and deletions of the consumer group, for as long as the
 * topic lives. Deleting a lock's topic restarts its offsets, and so its tokens: never delete the
 * topic of a lock whose tokens a resource still checks (or reset that resource too).
 *
 * <p>Thread-safe; the no-argument constructor does nothing, for {@link java.util.ServiceLoader}.
 */
public final class KafkaLockProvider implements LockProviderFactory {

    /** The option naming the prefix of lock topics and group ids. */
    public static final String TOPIC_PREFIX = "topicPrefix";
    /** The option giving the replication factor of new lock topics. */
    public static final String REPLICATION_FACTOR = "replicationFactor";
    /**
     * The option giving the members' heartbeat interval (default a sixth of the lease, at most 1s): a
     * waiter notices a release at its next heartbeat, so this is the hand-over time.
     */
    public static final String HEARTBEAT = "heartbeat";
    private static final Set<String> OPTIONS = Set.of(TOPIC_PREFIX, REPLICATION_FACTOR, HEARTBEAT);
    static final String DEFAULT_PREFIX = "latchkey.";

    public KafkaLockProvider() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("kafka");
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
        if (options.username() != null) {
            config.put("security.protocol", "SASL_PLAINTEXT");
            config.put("sasl.mechanism", "PLAIN");
            config.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
                    + jaasEscape(options.username()) + "\" password=\"" + jaasEscape(Objects.toString(options.password(), ""))
                    + "\";");
        }
        return backend(config, options);
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
        Duration heartbeat = null;
        String hb = options.backendOption(HEARTBEAT, null);
        if (hb != null) {
            heartbeat = Durations.parse(HEARTBEAT, hb);
            if (heartbeat.isZero() || heartbeat.compareTo(options.lease().dividedBy(3)) > 0) {
                throw new IllegalArgumentException("bad value '" + hb + "' for option " + HEARTBEAT + ": the heartbeat"
                        + " interval must be positive and at most a third of the lease (" + options.lease() + ")");
            }
        }
        return new KafkaLockBackend(config, options, prefix, rf, heartbeat);
    }

    private static String jaasEscape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
