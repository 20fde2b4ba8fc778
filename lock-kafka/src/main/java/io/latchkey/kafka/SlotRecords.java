package io.latchkey.kafka;

import io.latchkey.LockLostException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;

/**
 * The last completed schedule slot of a lock, kept as records on the lock's own partition beside the
 * grant markers.
 *
 * <p>A holder that reads or records a slot first appends a grant marker to the lock's partition (once
 * per grant, and only while the broker still keeps it in the group; see {@code HolderSlots}), and then
 * slot records carrying that marker's offset. Kafka cannot append conditionally, so the guard is in
 * the reading: a slot record counts only if no grant marker lies between its writer's marker and
 * itself, that is, if no later holder that reads or records slots had marked the partition when the
 * record was appended. A holder that lost the lock (paused past its lease, say) and appends
 * after a later grant writes a record every reader ignores, and is told so. The last record that
 * counts is the last completed slot; the partition is read backwards in growing windows from its end,
 * so a reading costs a few records, not the lock's history. Thread-safe (stateless).
 */
final class SlotRecords {

    /** Records read at first from the end of the partition; doubled until a slot record that counts is found. */
    private static final int FIRST_WINDOW = 64;

    private SlotRecords() {
    }

    /** The last completed slot recorded on the lock's partition, by any holder; empty if none. */
    static Optional<Instant> last(KafkaLockBackend backend, String lockName, TopicPartition partition)
            throws InterruptedException {
        long end = backend.records().endOffset(lockName, partition);
        long window = FIRST_WINDOW;
        long from = Math.max(0, end - window);
        long[] first = new long[1];
        while (true) {
            List<ConsumerRecord<byte[], byte[]>> records = backend.records().read(lockName, partition, from, end, first);
            long start = first[0];
            boolean extend = false;
            for (int i = records.size() - 1; i >= 0; i--) {
                ConsumerRecord<byte[], byte[]> r = records.get(i);
                if (!isSlot(r)) {
                    continue;
                }
                long token = token(r);
                if (token < 0) {
                    continue; // not a record of ours
                }
                if (token < start && start == from && from > 0) {
                    // its writer's grant lies before the window: read from there to judge it
                    from = token;
                    extend = true;
                    break;
                }
                if (!grantBetween(records, token, r.offset())) {
                    Optional<Instant> slot = slot(r);
                    if (slot.isPresent()) {
                        return slot;
                    }
                }
            }
            if (extend) {
                continue;
            }
            if (from <= 0 || start > from) {
                return Optional.empty(); // read back to the first record the partition still has
            }
            window *= 2;
            from = Math.max(0, end - window);
        }
    }

    /**
     * Appends {@code slot} for the holder whose marker is at offset {@code token}, then checks that no
     * grant came between the holder's marker and the record.
     *
     * @throws LockLostException if one did: the record does not count
     */
    static void record(KafkaLockBackend backend, String lockName, TopicPartition partition, long token, Instant slot)
            throws InterruptedException {
        long offset = backend.records().produceSlot(lockName, partition.topic(), token, slot);
        List<ConsumerRecord<byte[], byte[]>> between = backend.records().read(lockName, partition, token + 1, offset, new long[1]);
        if (grantBetween(between, token, offset)) {
            throw new LockLostException(lockName, "lock '" + lockName + "' (kafka topic '" + partition.topic()
                    + "') was granted to another holder before slot " + slot + " was recorded for token " + token
                    + ": the record does not count and the slot may run again elsewhere");
        }
    }

    private static boolean grantBetween(List<ConsumerRecord<byte[], byte[]>> records, long token, long offset) {
        for (ConsumerRecord<byte[], byte[]> r : records) {
            if (r.offset() > token && r.offset() < offset && !isSlot(r)) {
                return true;
            }
        }
        return false;
    }

    private static boolean isSlot(ConsumerRecord<byte[], byte[]> r) {
        Header kind = r.headers().lastHeader(KafkaRecords.KIND);
        return kind != null && Arrays.equals(kind.value(), KafkaRecords.SLOT);
    }

    private static long token(ConsumerRecord<byte[], byte[]> r) {
        Header h = r.headers().lastHeader(KafkaRecords.TOKEN);
        try {
            return h == null ? -1 : Long.parseLong(new String(h.value(), StandardCharsets.UTF_8));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static Optional<Instant> slot(ConsumerRecord<byte[], byte[]> r) {
        try {
            return r.value() == null ? Optional.empty() : Optional.of(Instant.parse(new String(r.value(), StandardCharsets.UTF_8)));
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }
}
