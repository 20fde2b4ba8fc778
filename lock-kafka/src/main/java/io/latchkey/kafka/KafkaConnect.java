package io.latchkey.kafka;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockOptions;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LockUri;
import io.latchkey.spi.Startup;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kafka backend's connect (contract rule 2, {@link Startup}): probes the bootstrap servers, then
 * starts the admin client and the producer the backend shares between its locks and checks the lease
 * against the brokers' session bounds, so that a lease they would refuse fails here, not at the first
 * join.
 *
 * <p>Thread-safe (immutable; the start-up allowance it shares JVM-wide is {@link Startup}'s).
 */
final class KafkaConnect {

    /** The backend's logger: these lines were the backend's before connect had a class of its own. */
    private static final Logger log = LoggerFactory.getLogger(KafkaLockBackend.class);
    static final String MIN_SESSION = "group.min.session.timeout.ms";
    static final String MAX_SESSION = "group.max.session.timeout.ms";
    /** Whether the Kafka clients have connected in this JVM yet: the start-up allowance of connect, see {@link Startup}. */
    private static final Startup STARTUP = new Startup();

    /** The admin client and the producer of one backend, connected. */
    record Clients(Admin admin, Producer<byte[], byte[]> producer) {
    }

    private final LockOptions options;
    private final String bootstrap;
    /** The groups' session.timeout.ms, and the heartbeat interval it leaves out of the lease, ms. */
    private final int sessionMs;
    private final int heartbeatMs;
    private final KafkaErrors errors;

    KafkaConnect(LockOptions options, String bootstrap, int sessionMs, int heartbeatMs, KafkaErrors errors) {
        this.options = options;
        this.bootstrap = bootstrap;
        this.sessionMs = sessionMs;
        this.heartbeatMs = heartbeatMs;
        this.errors = errors;
    }

    /**
     * Connects, within the timeout (plus the start-up allowance once the brokers answered).
     *
     * @param clientConfig the application's Kafka client settings, {@code bootstrap.servers} included
     * @throws IllegalArgumentException if the brokers would refuse the lease
     */
    Clients connect(Map<String, Object> clientConfig) {
        int timeoutMs = KafkaLockBackend.millis(options.timeout());
        Map<String, Object> adminConfig = new HashMap<>(clientConfig);
        adminConfig.put(AdminClientConfig.CLIENT_ID_CONFIG, "latchkey-admin-" + KafkaLockBackend.MEMBERS.incrementAndGet());
        adminConfig.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeoutMs);
        adminConfig.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeoutMs);
        Map<String, Object> producerConfig = new HashMap<>(clientConfig);
        producerConfig.put(ProducerConfig.ACKS_CONFIG, "all");
        producerConfig.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        producerConfig.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeoutMs);
        producerConfig.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, timeoutMs);
        producerConfig.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, timeoutMs);
        producerConfig.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        producerConfig.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        Admin a = null;
        Producer<byte[], byte[]> p = null;
        Deadline connectStart = Deadline.after(Duration.ZERO);
        Deadline connectBy = Deadline.after(options.timeout());
        probe(connectBy);
        // the brokers answered: the Kafka clients' own start-up gets the allowance, see Startup
        Duration bound = options.timeout().plus(STARTUP.allowance());
        connectBy = connectBy.plus(STARTUP.allowance());
        try {
            a = Admin.create(adminConfig);
            Collection<Node> nodes = a.describeCluster(new DescribeClusterOptions().timeoutMs(millisLeft(connectBy)))
                    .nodes().get(connectBy.remainingNanos(), TimeUnit.NANOSECONDS);
            checkSessionBounds(a, nodes, connectBy);
            p = new KafkaProducer<>(producerConfig);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeQuietly(a, p, Duration.ZERO); // the connect failed: nothing is pending that must finish
            throw new LockBackendUnavailableException(null, "interrupted while connecting to kafka at " + bootstrap, e);
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            closeQuietly(a, p, Duration.ZERO); // the connect failed: nothing is pending that must finish
            if (e instanceof IllegalArgumentException iae) {
                throw iae;
            }
            throw errors.connectFailure(KafkaErrors.cause(e), connectStart, bound);
        }
        STARTUP.connected();
        return new Clients(a, p);
    }

    /**
     * The brokers' part of connect, timed with this JVM's own sockets: an {@code ApiVersions} request to
     * each bootstrap server in turn until one answers, within {@code timeout}; see {@link Startup}.
     * Bootstrap servers this cannot parse are left to the admin client.
     */
    private void probe(Deadline by) {
        List<LockUri.HostAndPort> hosts = bootstrapHosts(bootstrap);
        if (hosts.isEmpty()) {
            return;
        }
        try {
            Startup.probe(hosts, by, API_VERSIONS, "a kafka broker");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendUnavailableException(null, "interrupted while connecting to kafka at " + bootstrap, e);
        } catch (Startup.NoAnswer e) {
            throw new LockBackendUnavailableException(null, "kafka at " + bootstrap + (e.silent() ? " did not answer within "
                    + Durations.format(options.timeout()) + ": " + e.getMessage() + "; check that the brokers run and are"
                    + " reachable, or raise the timeout option" : " could not be reached: " + e.getMessage()), null);
        }
    }

    /** The hosts of {@code bootstrap.servers}, or none if one of them does not parse as host:port. */
    static List<LockUri.HostAndPort> bootstrapHosts(String servers) {
        List<LockUri.HostAndPort> hosts = new ArrayList<>();
        for (String entry : servers.split(",")) {
            String s = entry.trim();
            int scheme = s.indexOf("://");
            s = scheme >= 0 ? s.substring(scheme + 3) : s;
            int colon = s.lastIndexOf(':');
            if (s.isEmpty()) {
                continue;
            }
            try {
                String host = s.substring(0, Math.max(0, colon));
                host = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
                hosts.add(new LockUri.HostAndPort(host, Integer.parseInt(s.substring(colon + 1))));
            } catch (RuntimeException e) {
                return List.of();
            }
        }
        return hosts;
    }

    /** An {@code ApiVersions} request, version 0: the request every Kafka client sends first, answered before SASL. */
    private static final byte[] API_VERSIONS = apiVersions();

    private static byte[] apiVersions() {
        byte[] clientId = "latchkey-probe".getBytes(StandardCharsets.US_ASCII);
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4 + 2 + 2 + 4 + 2 + clientId.length);
        b.putInt(b.capacity() - 4).putShort((short) 18).putShort((short) 0).putInt(1)
                .putShort((short) clientId.length).put(clientId);
        return b.array();
    }

    private static int millisLeft(Deadline by) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, by.remainingMillis()));
    }

    /**
     * The lease is the groups' {@code session.timeout.ms}, which the broker refuses outside its
     * {@code group.min.session.timeout.ms} and {@code group.max.session.timeout.ms}, at the first join
     * and without naming the value: asks the brokers for both settings, so that a lease they would
     * refuse fails at connect, naming the setting and its value. A principal not allowed to describe
     * the broker's configuration skips the check; the first join then reports the broker's refusal.
     */
    private void checkSessionBounds(Admin a, Collection<Node> nodes, Deadline by)
            throws InterruptedException, ExecutionException, TimeoutException {
        List<ConfigResource> brokers = nodes.stream()
                .map(n -> new ConfigResource(ConfigResource.Type.BROKER, n.idString())).collect(Collectors.toList());
        Map<ConfigResource, KafkaFuture<Config>> answers = a.describeConfigs(brokers,
                new DescribeConfigsOptions().timeoutMs(millisLeft(by))).values();
        for (Map.Entry<ConfigResource, KafkaFuture<Config>> e : answers.entrySet()) {
            Config config;
            try {
                config = e.getValue().get(by.remainingNanos(), TimeUnit.NANOSECONDS);
            } catch (ExecutionException x) {
                if (x.getCause() instanceof AuthorizationException) {
                    log.debug("not allowed to describe the configuration of kafka broker {}; the lease is checked at the"
                            + " first join", e.getKey().name());
                    return;
                }
                throw x;
            }
            long min = setting(config, MIN_SESSION, 6000);
            long max = setting(config, MAX_SESSION, 1_800_000);
            if (sessionMs < min || sessionMs > max) {
                boolean low = sessionMs < min;
                throw new IllegalArgumentException("lease " + Durations.format(options.lease()) + " is too "
                        + (low ? "short" : "long") + " for kafka broker " + e.getKey().name() + " at " + bootstrap + ": it"
                        + " gives the lock's consumer groups a session of " + Durations.format(Duration.ofMillis(sessionMs))
                        + " (the lease minus one heartbeat interval, " + Durations.format(Duration.ofMillis(heartbeatMs))
                        + "), but the broker sets " + (low ? MIN_SESSION + "=" + min : MAX_SESSION + "=" + max)
                        + "; choose a lease from " + Durations.format(Duration.ofMillis(min + heartbeatMs)) + " to "
                        + Durations.format(Duration.ofMillis(max + heartbeatMs)) + ", or change the broker's "
                        + (low ? MIN_SESSION : MAX_SESSION));
            }
        }
    }

    private static long setting(Config config, String name, long fallback) {
        ConfigEntry entry = config.get(name);
        if (entry == null || entry.value() == null) {
            return fallback;
        }
        try {
            return Long.parseLong(entry.value().trim());
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    /** Closes what is not {@code null}, waiting at most {@code t} for each; logs what fails. */
    static void closeQuietly(Admin a, Producer<byte[], byte[]> p, Duration t) {
        if (p != null) {
            try {
                p.close(t);
            } catch (RuntimeException e) {
                log.warn("closing the kafka producer failed", e);
            }
        }
        if (a != null) {
            try {
                a.close(t);
            } catch (RuntimeException e) {
                log.warn("closing the kafka admin client failed", e);
            }
        }
    }
}
