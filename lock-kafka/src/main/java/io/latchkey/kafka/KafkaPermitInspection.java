package io.latchkey.kafka;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.GrantRecord;
import io.latchkey.spi.HolderStamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Who holds each slot of a semaphore now ({@code SemaphoreBackend.inspectPermits}): the lock's
 * {@link KafkaInspection} once per slot's group, and the slots' tokens from their grant markers.
 *
 * <p>First, all sent at once with the admin client and bounded by the timeout: a DESCRIBE of the semaphore's
 * topic (its number of partitions is the number of permits), a DESCRIBE of every slot's group and a fetch of
 * their commits. A slot's group holds its slot as a lock's group holds the lock: the member assigned the slot's
 * partition whose commit ({@link GrantMetadata}) names its member id. That commit carries the holder text and
 * the session, but no token: a slot's member appends its grant marker to the token topic after the commit,
 * once its acquire kept it among the slots it won. So, second, the markers of the slots held are searched for
 * in the token topic, with one read bounded by what is left of the same timeout: from the first record stamped a minute before the
 * earliest of their commits (the commit's {@code confirmed=} time; the marker follows it by the holder's
 * clock, and the minute covers a step of that clock and a broker's that stamps the records itself), for the
 * marker whose key is the semaphore's name and whose value names the member's client id, unique to one
 * acquire. Its offset is the token, as {@code PermitLease.fencingToken()} gave it.
 *
 * <p>A slot whose marker is not there yet is free: its member was granted, but its acquire has not kept it
 * yet and may let it go (the lock's member assigned but not yet confirmed reads as free the same way). A
 * marker may also be gone with the token topic's retention (a permit held longer than it, 7 days by
 * default): when the search began at the topic's first record and that is not its first offset ever, a slot
 * without its marker reads as held with an unknown token. A commit without the time, or of no member id (a
 * Latchkey before this one), reads as held with an unknown token. Only reads: a topic, group or marker that
 * does not exist is not created.
 *
 * <p>Thread-safe: the admin client and the records' reader are.
 */
final class KafkaPermitInspection {

    /** How long before a slot's commit the search for its marker starts: clock steps, a broker's own stamps. */
    private static final Duration CLOCK_SLACK = Duration.ofMinutes(1);

    private final Admin admin;
    private final LockOptions options;
    private final String bootstrap;
    private final KafkaErrors errors;
    private final KafkaRecords records;
    private final String tokenTopic;

    KafkaPermitInspection(Admin admin, LockOptions options, String bootstrap, KafkaErrors errors, KafkaRecords records,
            String tokenTopic) {
        this.admin = admin;
        this.options = options;
        this.bootstrap = bootstrap;
        this.errors = errors;
        this.records = records;
        this.tokenTopic = tokenTopic;
    }

    /**
     * What the coordinators of semaphore {@code name}'s slot groups and the token topic record of each held slot,
     * by slot; empty if none is held or the semaphore's topic does not exist.
     *
     * @throws IllegalArgumentException if the topic has another number of partitions than {@code permits}
     * @throws LockBackendUnavailableException if the brokers did not answer within the timeout, the groups'
     *     reads and the markers' sharing it
     * @throws LockException if the client may not describe the topic or groups, or read their offsets or the markers
     */
    Map<Integer, GrantRecord> inspect(String name, String topic, int permits) throws InterruptedException {
        Deadline start = Deadline.after(Duration.ZERO);
        Deadline by = Deadline.after(options.timeout());
        Map<Integer, Slot> held = readSlots(name, topic, permits, start, by);
        Set<String> clientIds = new HashSet<>();
        long fromMs = Long.MAX_VALUE;
        for (Slot s : held.values()) {
            if (s.searchFromMs() >= 0) {
                clientIds.add(s.clientId());
                fromMs = Math.min(fromMs, s.searchFromMs());
            }
        }
        KafkaRecords.Markers markers = clientIds.isEmpty() ? new KafkaRecords.Markers(Map.of(), false)
                : records.findMarkers(name, new TopicPartition(tokenTopic, 0), fromMs - CLOCK_SLACK.toMillis(),
                        clientIds, by.remaining());
        Map<Integer, GrantRecord> slots = new TreeMap<>();
        held.forEach((slot, s) -> {
            Long token = s.searchFromMs() >= 0 ? markers.offsets().get(s.clientId()) : null;
            if (token != null || s.searchFromMs() < 0 || markers.olderRemoved()) {
                GrantRecord r = s.record();
                slots.put(slot, new GrantRecord(r.holder(), token != null ? token : -1, r.expiresIn(), -1, null));
            }
        });
        return slots;
    }

    /** The slots whose group's member assigned the slot's partition confirmed it with its commit, by slot. */
    private Map<Integer, Slot> readSlots(String name, String topic, int permits, Deadline start, Deadline by)
            throws InterruptedException {
        int timeoutMs = KafkaLockBackend.millis(options.timeout());
        List<String> groups = new ArrayList<>();
        Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
        for (int slot = 0; slot < permits; slot++) {
            String group = TopicNames.slotGroup(topic, slot);
            groups.add(group);
            specs.put(group, new ListConsumerGroupOffsetsSpec()
                    .topicPartitions(List.of(new TopicPartition(topic, slot))));
        }
        KafkaFuture<TopicDescription> described = admin.describeTopics(List.of(topic),
                new DescribeTopicsOptions().timeoutMs(timeoutMs)).topicNameValues().get(topic);
        Map<String, KafkaFuture<ConsumerGroupDescription>> members = admin.describeConsumerGroups(groups,
                new DescribeConsumerGroupsOptions().timeoutMs(timeoutMs)).describedGroups();
        ListConsumerGroupOffsetsResult commits = admin.listConsumerGroupOffsets(specs,
                new ListConsumerGroupOffsetsOptions().timeoutMs(timeoutMs));
        Map<Integer, Slot> held = new TreeMap<>();
        try {
            int partitions;
            try {
                partitions = described.get(by.remainingNanos(), TimeUnit.NANOSECONDS).partitions().size();
            } catch (ExecutionException e) {
                if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                    return held; // nobody ever used the semaphore
                }
                throw e;
            }
            if (partitions != permits) {
                throw KafkaTopics.permitsMismatch(name, topic, partitions, permits);
            }
            for (int slot = 0; slot < permits; slot++) {
                String group = groups.get(slot);
                ConsumerGroupDescription description;
                try {
                    description = members.get(group).get(by.remainingNanos(), TimeUnit.NANOSECONDS);
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof GroupIdNotFoundException) {
                        continue; // nobody ever joined the slot's group, or the broker deleted it emptied
                    }
                    throw e;
                }
                if (description.members().isEmpty()) {
                    continue;
                }
                TopicPartition partition = new TopicPartition(topic, slot);
                OffsetAndMetadata commit = commits.partitionsToOffsetAndMetadata(group)
                        .get(by.remainingNanos(), TimeUnit.NANOSECONDS).get(partition);
                Optional<KafkaInspection.Held> grant = KafkaInspection.held(description, commit, partition);
                if (grant.isPresent()) {
                    held.put(slot, slot(description, commit, grant.get()));
                }
            }
        } catch (ExecutionException | TimeoutException e) {
            throw failure(name, topic, start, KafkaErrors.cause(e));
        }
        return held;
    }

    /**
     * A held slot as its group and commit show it: the member's client id, which its marker names, and when
     * to search for the marker from (the commit's time, else the request's), or -1 if neither is known.
     */
    private static Slot slot(ConsumerGroupDescription description, OffsetAndMetadata commit,
            KafkaInspection.Held held) {
        String clientId = held.memberId() == null ? null : description.members().stream()
                .filter(m -> m.consumerId().equals(held.memberId())).map(MemberDescription::clientId)
                .findFirst().orElse(null);
        long fromMs = -1;
        if (clientId != null) {
            GrantMetadata grant = GrantMetadata.parse(commit.metadata()).orElseThrow();
            fromMs = grant.confirmedMs() >= 0 ? grant.confirmedMs()
                    : HolderStamp.requestedAt(grant.holder()).map(Instant::toEpochMilli).orElse(-1L);
        }
        return new Slot(held.record(), clientId, fromMs);
    }

    /**
     * A slot held by the commit's member.
     *
     * @param record what its commit records (without a token)
     * @param clientId the member's client id, or {@code null} if its commit named no member
     * @param searchFromMs the time from which its marker is searched for, or -1 if it is not
     */
    private record Slot(GrantRecord record, String clientId, long searchFromMs) {
    }

    private LockException failure(String name, String topic, Deadline start, Throwable e) {
        LockException refused = errors.authorizationFailure(name, "DESCRIBE topic '" + topic + "' and its slots' groups"
                + " and their offsets (inspect who holds the permits)", e);
        if (refused != null) {
            return refused;
        }
        LockException security = errors.securityFailure(name, "inspecting the slots of semaphore '" + name + "'", e);
        if (security != null) {
            return security;
        }
        String paused = KafkaErrors.pausedFor(start, options.timeout());
        return new LockBackendUnavailableException(name, "inspecting semaphore '" + name + "': kafka at " + bootstrap
                + (paused != null ? " gave up: " + paused + "; " + e
                        : " did not describe topic '" + topic + "' and its slots' consumer groups within "
                                + Durations.format(options.timeout()) + " (" + e + "); check that the brokers"
                                + " run and are reachable"), e);
    }
}
