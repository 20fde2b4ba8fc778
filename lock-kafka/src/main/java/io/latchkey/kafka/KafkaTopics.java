package io.latchkey.kafka;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kafka backend's topics: checks that a lock's or semaphore's topic and the token topic exist,
 * creating them if they do not, with the shared admin client, and keeps those known to exist so
 * that a name seen before costs no admin request.
 *
 * <p>Thread-safe: the cache is synchronized, and a lookup that two acquires make at once is merely
 * made twice.
 */
final class KafkaTopics {

    /** The backend's logger: these lines were the backend's before the topics had a class of their own. */
    private static final Logger log = LoggerFactory.getLogger(KafkaLockBackend.class);

    private final Admin admin;
    private final LockOptions options;
    private final String bootstrap;
    private final int replicationFactor;
    private final KafkaErrors errors;
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

    /**
     * @param replicationFactor the replication factor of new topics, or 0 for up to 3 as the cluster allows
     * @param topicCacheSize how many lock and semaphore topics are kept known
     */
    KafkaTopics(Admin admin, LockOptions options, String prefix, String bootstrap, int replicationFactor,
            int topicCacheSize, KafkaErrors errors) {
        this.knownTopics = Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
                return size() > topicCacheSize;
            }
        });
        this.tokenTopic = tokenTopic(prefix);
        this.admin = admin;
        this.options = options;
        this.bootstrap = bootstrap;
        this.replicationFactor = replicationFactor;
        this.errors = errors;
    }

    /** The topic of the fencing markers under {@code prefix}; no lock name maps to it, as {@code _t} is no escape. */
    static String tokenTopic(String prefix) {
        return prefix + "_tokens";
    }

    String tokenTopic() {
        return tokenTopic;
    }

    /**
     * Checks that lock {@code lockName}'s {@code topic} exists with one partition, creating it if it
     * does not, unless it is known to.
     *
     * @return whether the topic was known, so that nothing was asked
     */
    boolean ensureLockTopic(String lockName, String topic) throws InterruptedException {
        boolean known = knownTopics.get(topic) != null;
        if (!known) {
            ensureTopic(lockName, topic, 0);
            knownTopics.put(topic, 1);
        }
        return known;
    }

    /**
     * Checks that semaphore {@code name}'s {@code topic} exists with {@code permits} partitions,
     * creating it if it does not, unless its number of partitions is known.
     *
     * @return whether it was known before
     * @throws IllegalArgumentException if the topic has another number of partitions
     */
    boolean ensureSemaphoreTopic(String name, String topic, int permits) throws InterruptedException {
        Integer known = knownTopics.get(topic);
        boolean wasKnown = known != null;
        if (known == null) {
            known = ensureTopic(name, topic, permits);
            knownTopics.put(topic, known);
        }
        if (known != permits) {
            throw permitsMismatch(name, topic, known, permits);
        }
        return wasKnown;
    }

    void ensureTokenTopic(String name) throws InterruptedException {
        if (!tokenTopicKnown) {
            ensureTopic(name, tokenTopic, 0);
            tokenTopicKnown = true;
        }
    }

    /** Forgets {@code topic}: a member found it gone from its consumer's metadata. */
    void forget(String topic) {
        knownTopics.remove(topic);
    }

    /** Notes that appending a marker to {@code topic} failed with {@code cause}. */
    void markerFailed(String topic, Throwable cause) {
        if (topic.equals(tokenTopic) && (cause instanceof UnknownTopicOrPartitionException
                || String.valueOf(cause.getMessage()).contains("not present in metadata"))) {
            tokenTopicKnown = false; // deleted meanwhile? the next acquire looks it up again
        }
    }

    /** Lock topics known to exist; for tests. */
    int known() {
        return knownTopics.size();
    }

    /**
     * The refusal of {@code permits} for semaphore {@code name}, whose topic has {@code partitions}: acquire's
     * and inspect's.
     */
    static IllegalArgumentException permitsMismatch(String name, String topic, int partitions, int permits) {
        return new IllegalArgumentException("semaphore '" + name + "' is in use with " + partitions + " permits (kafka"
                + " topic '" + topic + "' has " + partitions + " partitions), and this call asked for " + permits
                + ": every holder of a semaphore must use the same number of permits; use that number or another"
                + " semaphore name");
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
                LockException refused = errors.authorizationFailure(lockName, "DESCRIBE topic '" + topic + "'", e);
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
                    LockException refused = errors.authorizationFailure(lockName, "CREATE topic '" + topic + "'", e);
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
            LockException security = errors.securityFailure(lockName, "checking kafka topic '" + topic + "' for " + what, e);
            if (security != null) {
                throw security;
            }
            throw new LockBackendUnavailableException(lockName, "kafka at " + bootstrap + " did not answer within "
                    + Durations.format(options.timeout()) + " while checking topic '" + topic + "' for " + what
                    + ": " + KafkaErrors.cause(e) + "; check that the brokers run and are reachable", KafkaErrors.cause(e));
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
}
