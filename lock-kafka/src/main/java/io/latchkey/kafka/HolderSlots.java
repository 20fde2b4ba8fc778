package io.latchkey.kafka;

import io.latchkey.LockException;
import io.latchkey.LockLostException;
import java.time.Instant;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.apache.kafka.common.TopicPartition;

/**
 * A holder's schedule slots: reads and records them as {@link SlotRecords} on its lock's partition,
 * behind the holder's own grant marker there, the anchor its slot records carry.
 *
 * <p>Thread-safe: the anchor is appended once, under a lock.
 */
final class HolderSlots {

    private final KafkaLockBackend backend;
    private final String lockName;
    private final String topic;
    /** "lock 'x'" or "semaphore 'x'", for messages. */
    private final String what;
    private final String clientId;
    /** Whether the member is assigned the partition. */
    private final BooleanSupplier holding;
    private final HeartbeatEvidence heartbeats;
    /** The offset of this holder's marker on the lock's own partition, written before its first slot record or read. */
    private long slotAnchor = -1; // guarded by anchorLock
    private final Object anchorLock = new Object();

    HolderSlots(KafkaLockBackend backend, String lockName, String topic, String what, String clientId, BooleanSupplier holding,
            HeartbeatEvidence heartbeats) {
        this.backend = backend;
        this.lockName = lockName;
        this.topic = topic;
        this.what = what;
        this.clientId = clientId;
        this.holding = holding;
        this.heartbeats = heartbeats;
    }

    /** The offset of this holder's marker on the lock's partition, or -1 before its first slot call. */
    long slotAnchor() {
        synchronized (anchorLock) {
            return slotAnchor;
        }
    }

    /**
     * The offset of this holder's marker on the lock's own partition, appended at the first call. The
     * marker is written only by a holder still kept by the broker once it is appended, so it lies
     * before any later holder's marker; a slot record counts only if no other marker lies between its
     * writer's marker and itself.
     */
    private long anchor(Instant slot) throws InterruptedException {
        synchronized (anchorLock) {
            if (slotAnchor >= 0) {
                return slotAnchor;
            }
            long offset = backend.records().produceMarker(lockName, topic, clientId);
            if (!holding.getAsBoolean() || !heartbeats.kept()) {
                throw new LockLostException(lockName, what + " (kafka topic '" + topic + "') may have"
                        + " been granted to another holder before this holder marked its partition"
                        + (slot != null ? ": slot " + slot + " was not recorded and may run again elsewhere" : ""));
            }
            slotAnchor = offset;
            return offset;
        }
    }

    /** The last completed slot recorded on {@code partition}, by any holder; see {@link SlotRecords#last}. */
    Optional<Instant> last(TopicPartition partition) {
        try {
            if (holding.getAsBoolean()) {
                anchor(null);
            }
            return SlotRecords.last(backend, lockName, partition);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException(lockName, "interrupted while reading the last completed slot of lock '" + lockName
                    + "' (kafka topic '" + topic + "')", e);
        }
    }

    /** Records {@code slot} on {@code partition}; see {@link SlotRecords#record}. */
    void record(TopicPartition partition, Instant slot) {
        if (!holding.getAsBoolean()) {
            throw new LockLostException(lockName, what + " (kafka topic '" + topic + "') is no longer"
                    + " assigned to this member: slot " + slot + " was not recorded and may run again elsewhere");
        }
        try {
            SlotRecords.record(backend, lockName, partition, anchor(slot), slot);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException(lockName, "interrupted while recording slot " + slot + " of lock '" + lockName
                    + "' (kafka topic '" + topic + "')", e);
        }
    }
}
