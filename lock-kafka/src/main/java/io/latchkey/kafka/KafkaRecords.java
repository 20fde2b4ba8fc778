package io.latchkey.kafka;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.LockOptions;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The records the Kafka backend writes besides the groups' own, and reads back: grant markers (the
 * fencing tokens on the token topic, a holder's anchor on its lock's partition) and slot records,
 * written with the backend's shared producer; slot records, and the grant markers of semaphore slots for
 * inspect, read with one consumer of no group, made at the first read and closed here. The backend closes
 * the producer.
 *
 * <p>Thread-safe: the producer is, and reads take turns on the one reader.
 */
final class KafkaRecords {

    /** The backend's logger: these lines were the backend's before the records had a class of their own. */
    private static final Logger log = LoggerFactory.getLogger(KafkaLockBackend.class);
    /** The record header that tells a grant marker from a slot record; markers without it are grants. */
    static final String KIND = "latchkey";
    static final byte[] GRANT = "grant".getBytes(StandardCharsets.UTF_8);
    static final byte[] SLOT = "slot".getBytes(StandardCharsets.UTF_8);
    /** The header of a slot record holding the offset of its writer's marker on the lock's partition. */
    static final String TOKEN = "token";

    private final Map<String, Object> clientConfig;
    private final LockOptions options;
    private final Producer<byte[], byte[]> producer;
    private final KafkaTopics topics;
    private final KafkaErrors errors;
    private final Object readerLock = new Object();
    private KafkaConsumer<byte[], byte[]> reader; // guarded by readerLock, made on the first slot read

    /** @param clientConfig the application's Kafka client settings, for the reader */
    KafkaRecords(Map<String, Object> clientConfig, LockOptions options, Producer<byte[], byte[]> producer,
            KafkaTopics topics, KafkaErrors errors) {
        this.clientConfig = clientConfig;
        this.options = options;
        this.producer = producer;
        this.topics = topics;
        this.errors = errors;
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
     *
     * @param grantee whom the marker's value names, for a reader of the topic: the member's client id, and
     *     for a lock's grant the holder text
     */
    long produceMarker(String lockName, String topic, String grantee) throws InterruptedException {
        try {
            ProducerRecord<byte[], byte[]> marker = new ProducerRecord<>(topic, 0, lockName.getBytes(StandardCharsets.UTF_8),
                    markerValue(grantee).getBytes(StandardCharsets.UTF_8));
            marker.headers().add(KIND, GRANT);
            return producer.send(marker)
                    .get(2 * options.timeout().toNanos(), TimeUnit.NANOSECONDS).offset();
        } catch (ExecutionException | TimeoutException e) {
            topics.markerFailed(topic, KafkaErrors.cause(e));
            LockException refused = errors.authorizationFailure(lockName, "WRITE to topic '" + topic + "' (a grant marker)", e);
            if (refused != null) {
                throw refused;
            }
            throw new LockBackendUnavailableException(lockName, "lock '" + lockName + "' was granted, but writing its"
                    + " marker to kafka topic '" + topic + "' failed: " + KafkaErrors.cause(e) + "; the lock was released,"
                    + " check that the topic's partition has a leader", KafkaErrors.cause(e));
        }
    }

    /** The value of a grant marker for {@code grantee}. */
    private static String markerValue(String grantee) {
        return "granted to " + grantee;
    }

    /**
     * Searches {@code partition} for the grant markers of {@code name} that name each of {@code clientIds} (a
     * semaphore slot member's marker names its client id alone), from the first record stamped at or after
     * {@code fromMs} up to the partition's end when the search began, or until each was found; read with the
     * consumer of no group, within {@code bound}. Only reads: the reader creates no topic.
     *
     * @return the markers found, and whether the search began at the partition's first offset above 0, so that
     *     a marker not found may have been removed with older records (retention) rather than not yet written
     */
    Markers findMarkers(String name, TopicPartition partition, long fromMs, Set<String> clientIds, Duration bound)
            throws InterruptedException {
        Deadline by = Deadline.after(bound);
        byte[] key = name.getBytes(StandardCharsets.UTF_8);
        Map<String, String> wanted = new HashMap<>(); // marker value -> client id
        clientIds.forEach(id -> wanted.put(markerValue(id), id));
        Map<String, Long> found = new HashMap<>();
        try {
            synchronized (readerLock) {
                KafkaConsumer<byte[], byte[]> r = reader();
                r.assign(List.of(partition));
                try {
                    OffsetAndTimestamp first = r.offsetsForTimes(Map.of(partition, fromMs), by.remaining())
                            .get(partition);
                    if (first == null) {
                        return new Markers(Map.of(), false); // nothing stamped since: no marker yet
                    }
                    long begin = r.beginningOffsets(List.of(partition), by.remaining()).get(partition);
                    long end = r.endOffsets(List.of(partition), by.remaining()).get(partition);
                    r.seek(partition, first.offset());
                    while (found.size() < wanted.size() && r.position(partition, by.remaining()) < end) {
                        if (by.hasPassed()) {
                            throw new org.apache.kafka.common.errors.TimeoutException("reading offsets "
                                    + first.offset() + " to " + end);
                        }
                        for (ConsumerRecord<byte[], byte[]> rec : r.poll(Duration.ofMillis(Math.max(1, Math.min(100,
                                by.remainingMillis()))))) {
                            String id = rec.offset() < end && isGrant(rec) && Arrays.equals(rec.key(), key)
                                    && rec.value() != null ? wanted.get(new String(rec.value(), StandardCharsets.UTF_8))
                                    : null;
                            if (id != null) {
                                found.putIfAbsent(id, rec.offset());
                            }
                        }
                        if (Thread.interrupted()) {
                            throw new InterruptedException();
                        }
                    }
                    return new Markers(found, first.offset() == begin && begin > 0);
                } finally {
                    r.unsubscribe();
                }
            }
        } catch (KafkaException e) {
            LockException refused = errors.authorizationFailure(name, "READ topic '" + partition.topic()
                    + "' (the grant markers)", e);
            if (refused != null) {
                throw refused;
            }
            throw new LockBackendUnavailableException(name, "reading the grant markers of semaphore '" + name
                    + "' from kafka topic '" + partition.topic() + "' failed within " + Durations.format(bound)
                    + ": " + e + "; check that the partition has a leader", e);
        }
    }

    /** Whether {@code r} is a grant marker: a marker without the kind header is one too. */
    private static boolean isGrant(ConsumerRecord<byte[], byte[]> r) {
        Header kind = r.headers().lastHeader(KIND);
        return kind == null || Arrays.equals(kind.value(), GRANT);
    }

    /**
     * What {@link #findMarkers} found.
     *
     * @param offsets the offset of each client id's marker found, by client id
     * @param olderRemoved whether the search began at the partition's first offset above 0: records before it
     *     were removed, a marker not found perhaps among them
     */
    record Markers(Map<String, Long> offsets, boolean olderRemoved) {
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
            LockException refused = errors.authorizationFailure(lockName, "WRITE to topic '" + topic + "' (the slot record)", e);
            if (refused != null) {
                throw refused;
            }
            throw new LockBackendUnavailableException(lockName, "recording slot " + slot + " of lock '" + lockName
                    + "' in kafka topic '" + topic + "' failed: " + KafkaErrors.cause(e) + "; the slot counts as not done", KafkaErrors.cause(e));
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
            LockException refused = errors.authorizationFailure(lockName, "READ topic '" + partition.topic() + "' (the slot records)", e);
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
            c.put("client.id", "latchkey-reader-" + KafkaLockBackend.MEMBERS.incrementAndGet());
            c.put("enable.auto.commit", false);
            c.put("isolation.level", "read_uncommitted");
            c.put("allow.auto.create.topics", false); // a read never creates a topic
            c.put("default.api.timeout.ms", KafkaLockBackend.millis(options.timeout()));
            c.put("request.timeout.ms", KafkaLockBackend.millis(options.timeout()));
            c.put("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
            c.put("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
            reader = new KafkaConsumer<>(c);
        }
        return reader;
    }


    /** Closes the reader, if a read made one. */
    void close() {
        synchronized (readerLock) {
            if (reader != null) {
                try {
                    reader.close(CloseOptions.timeout(options.timeout()));
                } catch (RuntimeException e) {
                    log.warn("closing the kafka consumer that reads slot records failed", e);
                }
            }
        }
    }
}
