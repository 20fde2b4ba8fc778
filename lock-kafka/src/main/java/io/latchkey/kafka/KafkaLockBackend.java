package io.latchkey.kafka;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.LockUri;
import io.latchkey.spi.Pauses;
import io.latchkey.spi.PermitLease;
import io.latchkey.spi.SemaphoreBackend;
import io.latchkey.spi.Startup;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kafka backend: one single-partition topic per lock, whose consumer group's assignment decides
 * the holder; one topic of {@code N} partitions per semaphore of {@code N} permits, whose group gives
 * each member at most one partition.
 *
 * <p>It shares one admin client (topic checks and creation) and one producer (the fencing markers,
 * all on one token topic) between all locks; each contender is a {@link GroupMember} with its own
 * consumer and polling thread. Thread-safe.
 */
final class KafkaLockBackend implements SemaphoreBackend {

    private static final Logger log = LoggerFactory.getLogger(KafkaLockBackend.class);
    static final String MIN_SESSION = "group.min.session.timeout.ms";
    static final String MAX_SESSION = "group.max.session.timeout.ms";

    private final Map<String, Object> clientConfig;
    private final LockOptions options;
    private final String prefix;
    private final int replicationFactor;
    /** The members' heartbeat interval, ms. */
    private final int heartbeatMs;
    /** The groups' session.timeout.ms: the lease minus one heartbeat interval; see {@link #consumerConfig}. */
    private final int sessionMs;
    private final String bootstrap;
    private final Admin admin;
    private final Producer<byte[], byte[]> producer;
    private final Set<GroupMember> members = ConcurrentHashMap.newKeySet();
    /**
     * Lock and semaphore topics known to exist, with their number of partitions (1 for a lock topic,
     * the permits for a semaphore's), the most recently used first out of at most
     * {@code topicCacheSize}. A lock name seen once needs no admin request again, so an acquire right
     * after a broker restart goes straight to the group (whose consumer waits for the coordinator)
     * instead of failing first on a topic lookup. An entry is dropped when a member finds the topic
     * gone from its consumer's metadata.
     */
    private final Map<String, Integer> knownTopics;
    /**
     * The topic of the fencing markers, shared by all locks under the prefix: producing to the lock
     * topics themselves would leave the producer per-topic metrics and metadata for every lock name
     * ever used (about 20 KB each), for the life of the client.
     */
    private final String tokenTopic;
    private volatile boolean tokenTopicKnown;
    /** Whether waiters park in a pending rejoin ({@code handover=rejoin}); see {@code GroupMember}. */
    private final boolean parkWaiters;
    private final Object readerLock = new Object();
    private KafkaConsumer<byte[], byte[]> reader; // guarded by readerLock, made on the first slot read
    /** The record header that tells a grant marker from a slot record; markers without it are grants. */
    static final String KIND = "latchkey";
    static final byte[] GRANT = "grant".getBytes(StandardCharsets.UTF_8);
    static final byte[] SLOT = "slot".getBytes(StandardCharsets.UTF_8);
    /** The header of a slot record holding the offset of its writer's marker on the lock's partition. */
    static final String TOKEN = "token";
    private static final AtomicInteger MEMBERS = new AtomicInteger();
    /** Whether the Kafka clients have connected in this JVM yet: the start-up allowance of connect, see {@link Startup}. */
    private static final Startup STARTUP = new Startup();
    /** Lock topics kept known per client: about 200 bytes each, so at most some 200 KB. */
    static final int TOPIC_CACHE_SIZE = 1024;

    /**
     * Connects.
     *
     * @param clientConfig the application's Kafka client settings, {@code bootstrap.servers} included
     * @param replicationFactor the replication factor of new lock topics, or 0 for up to 3 as the cluster allows
     * @param heartbeat the members' heartbeat interval, or {@code null} for the default
     */
    KafkaLockBackend(Map<String, Object> clientConfig, LockOptions options, String prefix, int replicationFactor,
            Duration heartbeat) {
        this(clientConfig, options, prefix, replicationFactor, heartbeat, TOPIC_CACHE_SIZE);
    }

    /** As above, with {@code topicCacheSize} lock topics kept known (tests use a small one). */
    KafkaLockBackend(Map<String, Object> clientConfig, LockOptions options, String prefix, int replicationFactor,
            Duration heartbeat, int topicCacheSize) {
        this.knownTopics = Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
                return size() > topicCacheSize;
            }
        });
        this.tokenTopic = tokenTopic(prefix);
        this.parkWaiters = KafkaLockProvider.HANDOVER_REJOIN.equals(
                options.backendOption(KafkaLockProvider.HANDOVER, KafkaLockProvider.DEFAULT_HANDOVER));
        this.clientConfig = Map.copyOf(clientConfig);
        this.options = options;
        this.prefix = prefix;
        this.replicationFactor = replicationFactor;
        int lease = millis(options.lease());
        Object given = clientConfig.get("heartbeat.interval.ms");
        this.heartbeatMs = heartbeat != null ? millis(heartbeat)
                : given != null ? Integer.parseInt(String.valueOf(given).trim()) : Math.max(10, Math.min(1000, lease / 6));
        if (heartbeatMs <= 0 || heartbeatMs > lease / 3) {
            throw new IllegalArgumentException("heartbeat.interval.ms=" + heartbeatMs + " in the kafka properties must be"
                    + " positive and at most a third of the lease (" + Durations.format(options.lease())
                    + "); leave it unset or use the heartbeat option");
        }
        this.sessionMs = lease - heartbeatMs;
        this.bootstrap = String.valueOf(clientConfig.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG));
        int timeoutMs = millis(options.timeout());
        Map<String, Object> adminConfig = new HashMap<>(clientConfig);
        adminConfig.put(AdminClientConfig.CLIENT_ID_CONFIG, "latchkey-admin-" + MEMBERS.incrementAndGet());
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
            throw connectFailure(cause(e), connectStart, bound);
        }
        this.admin = a;
        this.producer = p;
        STARTUP.connected();
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

    private LockException connectFailure(Throwable e, Deadline start, Duration bound) {
        String at = "kafka at " + bootstrap;
        String paused = pausedFor(start, bound);
        if (paused != null) {
            return new LockBackendUnavailableException(null, "connecting to " + at + " gave up: " + paused + "; " + e, e);
        }
        LockException security = securityFailure(null, at, e);
        if (security != null) {
            return security;
        }
        if (e instanceof ConfigException && String.valueOf(e.getMessage()).contains("resolvable")) {
            return new LockBackendUnavailableException(null, "no host of " + at + " could be resolved: " + e.getMessage()
                    + "; check the host names", e);
        }
        return new LockBackendUnavailableException(null, at + " did not answer within "
                + Durations.format(bound) + ": " + e + "; check that the brokers run and are reachable", e);
    }

    /**
     * The failures that no retry mends: credentials refused, TLS refused, a permission missing. Each
     * a {@link LockException} whose message says which; {@code null} for any other failure.
     */
    LockException securityFailure(String lockName, String subject, Throwable e) {
        String user = options.username() != null ? "user '" + options.username() + "'" : "the client's principal";
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SaslAuthenticationException) {
                return new LockException(lockName, subject + ": authentication failed for " + user + " ("
                        + t.getMessage() + "); check the user name, the password and the SASL mechanism", t);
            }
            if (t instanceof SslAuthenticationException) {
                return new LockException(lockName, subject + ": the TLS handshake failed (" + t.getMessage() + ");"
                        + " check that the truststore holds the CA that signed the brokers' certificates", t);
            }
            if (t instanceof AuthenticationException) {
                return new LockException(lockName, subject + ": authentication failed for " + user + " ("
                        + t.getMessage() + "); check the client's security settings", t);
            }
        }
        return null;
    }

    /**
     * {@link Pauses}' "this process was paused for N" if a call that began at {@code start} with the bound
     * {@code bound} overran it by more than the bound again (at least a second): no slow server explains
     * that, a pause of the whole process (a long GC, SIGSTOP, a suspended VM) does; {@code null} otherwise.
     */
    static String pausedFor(Deadline start, Duration bound) {
        return Pauses.since(start.nanoTime(), bound).pause().map(p -> Pauses.sentence(p, bound, null, "the brokers"))
                .orElse(null);
    }

    /**
     * A permission missing on the lock's topic, group or the cluster, as a {@link LockException}
     * naming the operation refused and the ACLs a lock needs; {@code null} for any other failure.
     *
     * @param operation the operation the call needed, such as {@code DESCRIBE on topic 'latchkey.x'}
     */
    LockException authorizationFailure(String lockName, String operation, Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof AuthorizationException) {
                String who = options.username() != null ? "user '" + options.username() + "'" : "the client's principal";
                return new LockException(lockName, "kafka at " + bootstrap + " refused lock '" + lockName + "': " + who
                        + " may not " + operation + " (" + t.getClass().getSimpleName() + ": " + t.getMessage() + ");"
                        + " a lock needs ACLs for CREATE, DESCRIBE, READ and WRITE on topics with prefix '" + prefix
                        + "' (CREATE only if the topic does not exist yet) and READ and DESCRIBE on groups with prefix '"
                        + prefix + "'", t);
            }
        }
        return null;
    }

    @Override
    public String describe(String lockName) {
        return "kafka topic '" + topic(lockName) + "'";
    }

    String topic(String lockName) {
        return TopicNames.topic(prefix, lockName);
    }

    @Override
    public BackendLease acquire(String lockName, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        String topic = topic(lockName);
        boolean known = knownTopics.get(topic) != null;
        if (!known) {
            ensureTopic(lockName, topic, 0);
            knownTopics.put(topic, 1);
        }
        ensureTokenTopic(lockName);
        GroupMember member = new GroupMember(this, lockName, topic, MEMBERS.incrementAndGet(), evidence);
        member.knownName = known;
        return await(member, topic, deadline);
    }

    private void ensureTokenTopic(String name) throws InterruptedException {
        if (!tokenTopicKnown) {
            ensureTopic(name, tokenTopic, 0);
            tokenTopicKnown = true;
        }
    }

    @Override
    public String describeSemaphore(String name) {
        return "kafka topic '" + semaphoreTopic(name) + "'";
    }

    String semaphoreTopic(String name) {
        return TopicNames.semaphoreTopic(prefix, name);
    }

    /**
     * A permit is membership of the semaphore's group holding one of its topic's partitions, exactly
     * as a lock is the one partition of its own topic: the same member, renewal, evidence and release.
     * The topic's number of partitions is the semaphore's number of permits, read once per client (and
     * again when the cache forgot the name).
     */
    @Override
    public PermitLease acquirePermit(String name, int permits, Deadline deadline, LeaseEvidence evidence)
            throws InterruptedException {
        String topic = semaphoreTopic(name);
        Integer known = knownTopics.get(topic);
        if (known == null) {
            known = ensureTopic(name, topic, permits);
            knownTopics.put(topic, known);
        }
        if (known != permits) {
            throw permitsMismatch(name, topic, known, permits);
        }
        ensureTokenTopic(name);
        GroupMember member = new GroupMember(this, name, topic, MEMBERS.incrementAndGet(), permits, evidence);
        return await(member, topic, deadline);
    }

    private static IllegalArgumentException permitsMismatch(String name, String topic, int partitions, int permits) {
        return new IllegalArgumentException("semaphore '" + name + "' is in use with " + partitions + " permits (kafka"
                + " topic '" + topic + "' has " + partitions + " partitions), and this call asked for " + permits
                + ": every holder of a semaphore must use the same number of permits; use that number or another"
                + " semaphore name");
    }

    private GroupMember await(GroupMember member, String topic, Deadline deadline) throws InterruptedException {
        String lockName = member.lockName();
        members.add(member);
        boolean handedOut = false;
        try {
            member.start(deadline.nanoTime());
            if (!member.awaitGrant(deadline.nanoTime())) {
                if (member.topicMissing()) {
                    // deleted since it was cached, it would look held for ever: look it up next time
                    knownTopics.remove(topic);
                }
                return null;
            }
            member.setToken(produceMarker(lockName, tokenTopic, member.clientId()));
            handedOut = true;
            return member;
        } finally {
            if (!handedOut) {
                member.release();
            }
        }
    }

    /**
     * The number of members of group {@code groupId} the coordinator counts as assigned a partition
     * (holders of the lock or of permits), or -1 if it did not answer within {@code timeoutNanos}.
     */
    int holders(String lockName, String groupId, long timeoutNanos) throws InterruptedException {
        try {
            return (int) admin.describeConsumerGroups(List.of(groupId)).all().get(timeoutNanos, TimeUnit.NANOSECONDS)
                    .get(groupId).members().stream().filter(m -> !m.assignment().topicPartitions().isEmpty()).count();
        } catch (ExecutionException e) {
            LockException refused = authorizationFailure(lockName, "DESCRIBE group '" + groupId + "'", e);
            if (refused != null) {
                throw refused;
            }
            return -1;
        } catch (TimeoutException e) {
            return -1;
        }
    }

    /**
     * Asks the coordinator whether the member {@code clientId} has left group {@code groupId}.
     *
     * @return {@code null} if it has, or if the coordinator still counts it (it then expels it when its
     *     session ends); the failure to report if the coordinator did not answer
     */
    LockBackendUnavailableException memberLeft(String lockName, String groupId, String clientId, long timeoutNanos)
            throws InterruptedException {
        try {
            boolean present = admin.describeConsumerGroups(List.of(groupId)).all().get(timeoutNanos, TimeUnit.NANOSECONDS)
                    .get(groupId).members().stream().anyMatch(m -> clientId.equals(m.clientId()));
            if (present) {
                log.warn("lock '{}': member {} is still in consumer group '{}' after leaving; the broker expels it when"
                        + " its session of {} ends", lockName, clientId, groupId, Durations.format(Duration.ofMillis(sessionMs)));
            }
            return null;
        } catch (ExecutionException | TimeoutException e) {
            return new LockBackendUnavailableException(lockName, "releasing lock '" + lockName + "': kafka at " + bootstrap
                    + " did not confirm within " + Durations.format(options.timeout()) + " that the holder left consumer"
                    + " group '" + groupId + "' (" + cause(e) + "); the broker frees the lock when the member's session of "
                    + Durations.format(Duration.ofMillis(sessionMs)) + " ends", cause(e));
        }
    }

    /** Lock topics known to exist; for tests. */
    int knownTopics() {
        return knownTopics.size();
    }

    /** The topic of the fencing markers under {@code prefix}; no lock name maps to it, as {@code _t} is no escape. */
    static String tokenTopic(String prefix) {
        return prefix + "_tokens";
    }

    /**
     * Checks that {@code topic} exists with one partition, creating it if it does not; for semaphore
     * {@code lockName} of {@code permits > 0} permits, with that many.
     *
     * @return the topic's number of partitions
     * @throws IllegalArgumentException if a semaphore's topic has another number of partitions
     */
    private int ensureTopic(String lockName, String topic, int permits) throws InterruptedException {
        int wanted = Math.max(1, permits);
        String what = (permits > 0 ? "semaphore '" : "lock '") + lockName + "'";
        long timeout = options.timeout().toNanos();
        Deadline deadline = Deadline.after(options.timeout());
        try {
            Optional<TopicDescription> existing;
            try {
                existing = describeTopic(topic, timeout);
            } catch (ExecutionException e) {
                LockException refused = authorizationFailure(lockName, "DESCRIBE topic '" + topic + "'", e);
                if (refused != null) {
                    throw refused;
                }
                throw e;
            }
            if (existing.isEmpty()) {
                int rf = replicationFactor;
                if (rf <= 0) {
                    int live = admin.describeCluster().nodes().get(deadline.remainingNanos(), TimeUnit.NANOSECONDS).size();
                    // Just after a broker came back the cluster can report no node for a moment: ask again
                    // within the timeout before calling the backend unreachable.
                    while (live == 0 && !deadline.hasPassed()) {
                        TimeUnit.MILLISECONDS.sleep(Math.min(100, Math.max(1, deadline.remainingMillis())));
                        live = admin.describeCluster().nodes().get(deadline.remainingNanos(), TimeUnit.NANOSECONDS).size();
                    }
                    if (live == 0) {
                        // A broker that is paused or still starting reports no live node: that is an unreachable
                        // backend, not a replication factor of 0 to ask the broker for.
                        throw new LockBackendUnavailableException(lockName, "kafka at " + bootstrap + " reported no live"
                                + " broker while creating topic '" + topic + "' for " + what
                                + "; check that the brokers are up and reachable", null);
                    }
                    rf = Math.min(3, live);
                }
                try {
                    admin.createTopics(List.of(new NewTopic(topic, wanted, (short) rf))).all()
                            .get(deadline.remainingNanos(), TimeUnit.NANOSECONDS);
                    log.info("created topic '{}' for {} ({} partitions, replication factor {})", topic, what, wanted, rf);
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof InvalidReplicationFactorException) {
                        throw new LockException(lockName, "cannot create kafka topic '" + topic + "' for " + what
                                + " with replication factor " + rf + ": " + e.getCause().getMessage()
                                + "; lower the replicationFactor option or create the topic yourself",
                                e.getCause());
                    }
                    LockException refused = authorizationFailure(lockName, "CREATE topic '" + topic + "'", e);
                    if (refused != null) {
                        throw refused;
                    }
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                }
                // brokers learn of a new topic from the controller a little later
                long visibleBy = System.nanoTime() + Math.max(deadline.remainingNanos(), timeout / 2);
                while ((existing = describeTopic(topic, Math.max(1, visibleBy - System.nanoTime()))).isEmpty()) {
                    if (System.nanoTime() - visibleBy >= 0) {
                        throw new TimeoutException("topic '" + topic + "' was created but is not visible yet");
                    }
                    Thread.sleep(50);
                }
            }
            int partitions = existing.get().partitions().size();
            if (permits > 0) {
                if (partitions != permits) {
                    throw permitsMismatch(lockName, topic, partitions, permits);
                }
                return partitions;
            }
            if (partitions != 1) {
                throw new LockException(lockName, "kafka topic '" + topic + "' of lock '" + lockName + "' has " + partitions
                        + " partitions, but a lock topic must have exactly one (each member of the group would hold"
                        + " a partition, and so the lock): delete the topic or choose another topicPrefix");
            }
            return 1;
        } catch (ExecutionException | TimeoutException e) {
            LockException security = securityFailure(lockName, "checking kafka topic '" + topic + "' for " + what, e);
            if (security != null) {
                throw security;
            }
            throw new LockBackendUnavailableException(lockName, "kafka at " + bootstrap + " did not answer within "
                    + Durations.format(options.timeout()) + " while checking topic '" + topic + "' for " + what
                    + ": " + cause(e) + "; check that the brokers run and are reachable", cause(e));
        }
    }

    private Optional<TopicDescription> describeTopic(String topic, long timeoutNanos)
            throws InterruptedException, ExecutionException, TimeoutException {
        KafkaFuture<TopicDescription> f = admin.describeTopics(List.of(topic)).topicNameValues().get(topic);
        try {
            return Optional.of(f.get(timeoutNanos, TimeUnit.NANOSECONDS));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /**
     * Appends a grant marker for {@code lockName} to the only partition of {@code topic} and returns
     * its offset. On the token topic, that offset is the fencing token: offsets in a partition only
     * grow, whatever happens to the consumer groups (whose generation restarts when the broker deletes
     * an empty group), and each holder appends after the previous holder's marker because it is
     * granted only after that holder left or was expelled. One partition for all locks keeps them
     * growing per lock too, and keeps the producer's per-topic state at one topic however many lock
     * names are used. On a lock's own topic it anchors that holder's slot records (see
     * {@link SlotRecords}).
     */
    long produceMarker(String lockName, String topic, String holder) throws InterruptedException {
        try {
            ProducerRecord<byte[], byte[]> marker = new ProducerRecord<>(topic, 0, lockName.getBytes(StandardCharsets.UTF_8),
                    ("granted to " + holder).getBytes(StandardCharsets.UTF_8));
            marker.headers().add(KIND, GRANT);
            return producer.send(marker)
                    .get(2 * options.timeout().toNanos(), TimeUnit.NANOSECONDS).offset();
        } catch (ExecutionException | TimeoutException e) {
            Throwable c = cause(e);
            if (topic.equals(tokenTopic) && (c instanceof UnknownTopicOrPartitionException
                    || String.valueOf(c.getMessage()).contains("not present in metadata"))) {
                tokenTopicKnown = false; // deleted meanwhile? the next acquire looks it up again
            }
            LockException refused = authorizationFailure(lockName, "WRITE to topic '" + topic + "' (a grant marker)", e);
            if (refused != null) {
                throw refused;
            }
            throw new LockBackendUnavailableException(lockName, "lock '" + lockName + "' was granted, but writing its"
                    + " marker to kafka topic '" + topic + "' failed: " + cause(e) + "; the lock was released,"
                    + " check that the topic's partition has a leader", cause(e));
        }
    }

    /**
     * Appends a slot record (the slot, and the offset of the writer's marker in a header) to the lock's
     * partition and returns its offset.
     */
    long produceSlot(String lockName, String topic, long token, Instant slot) throws InterruptedException {
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, 0, lockName.getBytes(StandardCharsets.UTF_8),
                slot.toString().getBytes(StandardCharsets.UTF_8));
        record.headers().add(KIND, SLOT).add(TOKEN, Long.toString(token).getBytes(StandardCharsets.UTF_8));
        try {
            return producer.send(record).get(2 * options.timeout().toNanos(), TimeUnit.NANOSECONDS).offset();
        } catch (ExecutionException | TimeoutException e) {
            LockException refused = authorizationFailure(lockName, "WRITE to topic '" + topic + "' (the slot record)", e);
            if (refused != null) {
                throw refused;
            }
            throw new LockBackendUnavailableException(lockName, "recording slot " + slot + " of lock '" + lockName
                    + "' in kafka topic '" + topic + "' failed: " + cause(e) + "; the slot counts as not done", cause(e));
        }
    }

    /**
     * The records of {@code partition} from offset {@code from} (or its first one, if retention
     * removed the earlier ones) up to {@code to}, exclusive, read with a consumer of no group.
     *
     * @return the records in offset order, and in {@code [0]} of {@code first} the offset reading began at
     */
    List<ConsumerRecord<byte[], byte[]>> read(String lockName, TopicPartition partition, long from, long to, long[] first)
            throws InterruptedException {
        Deadline by = Deadline.after(options.timeout().multipliedBy(2));
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try {
            synchronized (readerLock) {
                KafkaConsumer<byte[], byte[]> r = reader();
                r.assign(List.of(partition));
                long begin = r.beginningOffsets(List.of(partition), by.remaining()).get(partition);
                long start = Math.max(from, begin);
                first[0] = start;
                r.seek(partition, start);
                while (r.position(partition, by.remaining()) < to) {
                    if (by.hasPassed()) {
                        throw new org.apache.kafka.common.errors.TimeoutException("reading offsets " + start + " to " + to);
                    }
                    for (ConsumerRecord<byte[], byte[]> rec : r.poll(Duration.ofMillis(Math.max(1, Math.min(100, by.remainingMillis()))))) {
                        if (rec.offset() < to) {
                            out.add(rec);
                        }
                    }
                    if (Thread.interrupted()) {
                        throw new InterruptedException();
                    }
                }
                r.unsubscribe();
            }
        } catch (KafkaException e) {
            LockException refused = authorizationFailure(lockName, "READ topic '" + partition.topic() + "' (the slot records)", e);
            if (refused != null) {
                throw refused;
            }
            throw new LockBackendUnavailableException(lockName, "reading the slot records of lock '" + lockName
                    + "' from kafka topic '" + partition.topic() + "' failed within "
                    + Durations.format(options.timeout().multipliedBy(2)) + ": " + e + "; check that the partition has a leader", e);
        }
        return out;
    }

    /** The end offset of {@code partition}: the offset its next record gets. */
    long endOffset(String lockName, TopicPartition partition) {
        try {
            synchronized (readerLock) {
                return reader().endOffsets(List.of(partition), options.timeout()).get(partition);
            }
        } catch (KafkaException e) {
            throw new LockBackendUnavailableException(lockName, "reading the end offset of kafka topic '"
                    + partition.topic() + "' of lock '" + lockName + "' failed within " + Durations.format(options.timeout())
                    + ": " + e + "; check that the partition has a leader", e);
        }
    }

    private KafkaConsumer<byte[], byte[]> reader() {
        if (reader == null) {
            Map<String, Object> c = new HashMap<>(clientConfig);
            c.remove("group.id");
            c.put("client.id", "latchkey-reader-" + MEMBERS.incrementAndGet());
            c.put("enable.auto.commit", false);
            c.put("isolation.level", "read_uncommitted");
            c.put("default.api.timeout.ms", millis(options.timeout()));
            c.put("request.timeout.ms", millis(options.timeout()));
            c.put("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
            c.put("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
            reader = new KafkaConsumer<>(c);
        }
        return reader;
    }

    /**
     * The consumer settings of a member: the application's, then what the lock needs; for a
     * semaphore of {@code permits > 0} permits, what its {@link SlotAssignor} needs.
     */
    Map<String, Object> consumerConfig(String groupId, String clientId, int permits) {
        Map<String, Object> c = new HashMap<>(clientConfig);
        int lease = millis(options.lease());
        c.put("group.id", groupId);
        c.put("client.id", clientId);
        c.put("group.protocol", "classic");
        c.remove("group.instance.id");
        // Sticky cooperative assignment never moves the partition away from its owner when another
        // member joins; range and round-robin would hand it to the joiner about half the time.
        c.put("partition.assignment.strategy", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
        if (permits > 0) {
            // The sticky assignor would give a member several partitions (permits) when the group has
            // fewer members than partitions: one each, the earliest request first, owners keeping theirs.
            c.put("partition.assignment.strategy", List.of(SlotAssignor.Strategy.class));
            c.put(SlotAssignor.REQUESTED_AT, System.currentTimeMillis());
            c.put(SlotAssignor.PERMITS, permits);
        }
        c.put("enable.auto.commit", false);
        c.put("auto.offset.reset", "latest");
        // The broker expels a silent member session.timeout.ms after the last heartbeat it received; the
        // other members learn of it at their next heartbeat, and a waiter learns of a release the same
        // way. A session of the lease minus one heartbeat interval therefore frees the lock of a crashed
        // holder for the next waiter within the lease (plus the join and sync round trips).
        c.put("session.timeout.ms", sessionMs);
        c.put("heartbeat.interval.ms", heartbeatMs);
        c.putIfAbsent("max.poll.interval.ms", Math.max(300_000, lease));
        c.put("default.api.timeout.ms", millis(options.timeout()));
        c.put("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        c.put("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        return c;
    }

    LockOptions options() {
        return options;
    }

    boolean parkWaiters() {
        return parkWaiters;
    }

    void removed(GroupMember member) {
        members.remove(member);
    }

    /** The shared admin client's metrics; for tests. */
    Map<MetricName, ? extends Metric> adminMetrics() {
        return admin.metrics();
    }

    /** The shared producer's metrics; for tests. */
    Map<MetricName, ? extends Metric> producerMetrics() {
        return producer.metrics();
    }

    /** Open members; for tests. */
    Set<GroupMember> members() {
        return members;
    }

    @Override
    public void close() {
        for (GroupMember m : List.copyOf(members)) {
            try {
                m.release();
            } catch (RuntimeException e) {
                log.warn("closing: leaving the group of lock '{}' failed", m.lockName(), e);
            }
        }
        synchronized (readerLock) {
            if (reader != null) {
                try {
                    reader.close(CloseOptions.timeout(options.timeout()));
                } catch (RuntimeException e) {
                    log.warn("closing the kafka consumer that reads slot records failed", e);
                }
            }
        }
        closeQuietly(admin, producer, options.timeout());
    }

    private void closeQuietly(Admin a, Producer<byte[], byte[]> p, Duration t) {
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

    static Throwable cause(Throwable e) {
        return e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
    }

    static int millis(Duration d) {
        return (int) Math.min(Integer.MAX_VALUE, d.toMillis());
    }
}
