package io.latchkey.kafka;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.header.Header;

/**
 * The names of the held locks under a prefix ({@code LockBackend.list}), from the consumer groups the
 * brokers keep: a ListGroups of every broker for the consumer groups with members (an emptied group, a
 * released name's, is left out by the brokers), the lock names read back from the group ids under the
 * backend's prefix ({@link TopicNames#lockName}; semaphore slots' groups and other groups have no lock
 * name), then, in name order and in batches, a DESCRIBE of the groups and a fetch of their commits, both
 * at once, until {@code limit} groups have a holder as {@link KafkaInspection} decides it.
 *
 * <p>A name too long for a topic maps to a cut group id that ends with the name's hash; such a group, if
 * held, is named by the key of its holder's grant marker, which the commit's token locates in the token
 * topic (one read of one record each). Only reads: nothing is created. Thread-safe.
 */
final class HeldLocks {

    /** The most groups described (and their commits fetched) at once. */
    private static final int MAX_BATCH = 500;
    /** The states of a classic group with members: Latchkey's groups are classic ones. */
    private static final Set<GroupState> WITH_MEMBERS = Set.of(GroupState.STABLE, GroupState.PREPARING_REBALANCE,
            GroupState.COMPLETING_REBALANCE);

    private final Admin admin;
    private final LockOptions options;
    private final String prefix;
    private final String bootstrap;
    private final KafkaErrors errors;
    private final KafkaRecords records;

    HeldLocks(Admin admin, LockOptions options, String prefix, String bootstrap, KafkaErrors errors, KafkaRecords records) {
        this.admin = admin;
        this.options = options;
        this.prefix = prefix;
        this.bootstrap = bootstrap;
        this.errors = errors;
        this.records = records;
    }

    /**
     * The first {@code limit} held lock names that start with {@code namePrefix} and follow {@code after}
     * (if not null), in order.
     *
     * @throws LockBackendUnavailableException if the brokers did not answer within the timeout, a request each
     * @throws LockException if the client may not describe the groups or read their offsets
     */
    List<String> list(String namePrefix, String after, int limit) throws InterruptedException {
        TreeMap<String, String> candidates = new TreeMap<>(); // lock name -> group
        List<String> cut = new ArrayList<>();
        for (GroupListing g : groups()) {
            String name = TopicNames.lockName(prefix, g.groupId());
            if (name != null && name.startsWith(namePrefix) && (after == null || name.compareTo(after) > 0)) {
                candidates.put(name, g.groupId());
            } else if (name == null && TopicNames.isCut(prefix, g.groupId())) {
                cut.add(g.groupId());
            }
        }
        List<String> held = new ArrayList<>();
        List<Map.Entry<String, String>> ordered = new ArrayList<>(candidates.entrySet());
        int batch = Math.min(MAX_BATCH, Math.max(limit, 16));
        for (int i = 0; i < ordered.size() && held.size() < limit; i += batch) {
            List<Map.Entry<String, String>> part = ordered.subList(i, Math.min(ordered.size(), i + batch));
            Map<String, KafkaInspection.Held> grants = read(part.stream().map(Map.Entry::getValue).toList());
            for (Map.Entry<String, String> e : part) {
                if (grants.containsKey(e.getValue()) && held.size() < limit) {
                    held.add(e.getKey());
                }
            }
        }
        if (cut.isEmpty()) {
            return held;
        }
        // the names cut to their hash sort anywhere: every held one is named, then all are sorted again
        for (Map.Entry<String, KafkaInspection.Held> e : read(cut).entrySet()) {
            String name = markedName(e.getKey(), e.getValue().record().token());
            if (name != null && name.startsWith(namePrefix) && (after == null || name.compareTo(after) > 0)) {
                held.add(name);
            }
        }
        return held.stream().sorted().limit(limit).toList();
    }

    /** The consumer groups the brokers keep with members, of every broker. */
    private Collection<GroupListing> groups() throws InterruptedException {
        Deadline start = Deadline.after(Duration.ZERO);
        try {
            // no filter by group type, which older brokers lack (ListGroups v5): the names tell ours apart
            return admin.listGroups(new ListGroupsOptions().inGroupStates(WITH_MEMBERS)
                    .timeoutMs(KafkaLockBackend.millis(options.timeout())))
                    .all().get(options.timeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw failure("list the consumer groups", start, KafkaErrors.cause(e));
        }
    }

    /** The grants of those of {@code groups} that have a holder, by group. */
    private Map<String, KafkaInspection.Held> read(List<String> groups) throws InterruptedException {
        Deadline start = Deadline.after(Duration.ZERO);
        Deadline by = Deadline.after(options.timeout());
        int timeoutMs = KafkaLockBackend.millis(options.timeout());
        Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
        groups.forEach(g -> specs.put(g, new ListConsumerGroupOffsetsSpec().topicPartitions(List.of(new TopicPartition(g, 0)))));
        Map<String, KafkaFuture<ConsumerGroupDescription>> described = admin.describeConsumerGroups(groups,
                new DescribeConsumerGroupsOptions().timeoutMs(timeoutMs)).describedGroups();
        Map<String, KafkaFuture<Map<TopicPartition, OffsetAndMetadata>>> committed = new HashMap<>();
        var offsets = admin.listConsumerGroupOffsets(specs, new ListConsumerGroupOffsetsOptions().timeoutMs(timeoutMs));
        groups.forEach(g -> committed.put(g, offsets.partitionsToOffsetAndMetadata(g)));
        Map<String, KafkaInspection.Held> held = new HashMap<>();
        try {
            for (String g : groups) {
                ConsumerGroupDescription d;
                try {
                    d = described.get(g).get(by.remainingNanos(), TimeUnit.NANOSECONDS);
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof GroupIdNotFoundException) {
                        continue; // the broker deleted it since it was listed
                    }
                    throw e;
                }
                if (d.members().isEmpty()) {
                    continue;
                }
                TopicPartition partition = new TopicPartition(g, 0);
                KafkaInspection.held(d, committed.get(g).get(by.remainingNanos(), TimeUnit.NANOSECONDS).get(partition),
                        partition).ifPresent(h -> held.put(g, h));
            }
        } catch (ExecutionException | TimeoutException e) {
            throw failure("describe " + groups.size() + " consumer groups and read their offsets", start, KafkaErrors.cause(e));
        }
        return held;
    }

    /**
     * The name of the lock whose cut group {@code group} was granted with the marker at {@code token} of the
     * token topic: the marker's key, if it maps to that group; {@code null} if the marker is gone (retention)
     * or the commit carried no token.
     */
    private String markedName(String group, long token) throws InterruptedException {
        if (token < 0) {
            return null;
        }
        String tokenTopic = KafkaTopics.tokenTopic(prefix);
        List<ConsumerRecord<byte[], byte[]>> marker;
        try {
            marker = records.read(group, new TopicPartition(tokenTopic, 0), token, token + 1, new long[1]);
        } catch (LockBackendUnavailableException e) {
            throw new LockBackendUnavailableException(null, "listing the held locks under prefix '" + prefix + "': kafka at "
                    + bootstrap + " did not return the grant marker at offset " + token + " of topic '" + tokenTopic
                    + "', which names the lock of consumer group '" + group + "' (" + e.getCause() + "); check that the"
                    + " topic's partition has a leader", e);
        }
        for (ConsumerRecord<byte[], byte[]> r : marker) {
            Header kind = r.headers().lastHeader(KafkaRecords.KIND);
            if (r.offset() == token && r.key() != null && (kind == null || new String(kind.value(), StandardCharsets.UTF_8)
                    .equals(new String(KafkaRecords.GRANT, StandardCharsets.UTF_8)))) {
                String name = new String(r.key(), StandardCharsets.UTF_8);
                return TopicNames.topic(prefix, name).equals(group) ? name : null;
            }
        }
        return null;
    }

    private LockException failure(String what, Deadline start, Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof AuthorizationException) {
                return new LockException(null, "kafka at " + bootstrap + " refused to " + what + " (listing the held"
                        + " locks under prefix '" + prefix + "'): " + t.getMessage() + "; listing needs DESCRIBE on groups"
                        + " and topics with prefix '" + prefix + "'", t);
            }
        }
        LockException security = errors.securityFailure(null, "listing the held locks under prefix '" + prefix + "'", e);
        if (security != null) {
            return security;
        }
        String paused = KafkaErrors.pausedFor(start, options.timeout());
        return new LockBackendUnavailableException(null, "listing the held locks under prefix '" + prefix + "': kafka at "
                + bootstrap + (paused != null ? " gave up: " + paused + "; " + e
                        : " did not " + what + " within " + Durations.format(options.timeout()) + " (" + e
                                + "); check that the brokers run and are reachable"), e);
    }
}
