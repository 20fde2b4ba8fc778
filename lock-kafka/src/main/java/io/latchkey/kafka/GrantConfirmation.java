package io.latchkey.kafka;

import io.latchkey.LockBackendUnavailableException;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.OffsetMetadataTooLarge;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.RetriableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requests that confirm a {@link GroupMember}'s grant once it is assigned the partition: a lock's
 * grant marker, then the offset commit that proves the coordinator still keeps the member and records
 * the grant ({@link GrantMetadata}). Used by the thread that polls the member alone.
 *
 * <p>Why a commit. The assignment itself is no evidence that the coordinator keeps the member. The
 * coordinator starts every member's session when the join phase ends, and renews it at a SyncGroup only
 * if that request came before the leader's; a follower's SyncGroup that finds the group stable already is
 * answered at once, its session still counted from the end of the join phase. That end cannot be dated
 * here: the JoinGroup's answer may have been held up in a network cut for most of a session, and a
 * JoinGroup may also wait in the coordinator for seconds before the phase ends (a waiter parked until the
 * holder leaves), so neither the JoinGroup's sending nor its answer bounds it. A member granted on the
 * SyncGroup's answer could then be expelled, and its partition given to the next member, well before the
 * deadline it claimed. An offset commit of the member's generation renews its session whenever the group
 * is stable or preparing a rebalance, and fails otherwise (another generation, an unknown member); so a
 * commit that succeeds proves the member kept until at least a session after it was sent. It is of offset
 * 0 (the partition's records are never read by the group), one round trip per grant, and its metadata
 * carries the grant's record at no cost of its own.
 *
 * <p>Why a lock's marker comes first. Its offset is the fencing token, which the commit then records beside
 * the holder for {@link KafkaInspection}. The order also puts a holder's marker before its confirmation,
 * which only a member the coordinator still keeps can make, and so before any later holder's marker (the
 * next holder is assigned the partition only once this member left or was expelled). A member whose commit
 * then fails does not hold and has burnt an offset; its next assignment writes a new marker. A semaphore's
 * member writes its marker after the commit, once its acquire chose it among the slots granted (every
 * slot's member may be granted at once: a marker each would cost requests for nothing).
 */
final class GrantConfirmation {

    /** The member's logger: these lines were the member's before the confirmation had a class of its own. */
    private static final Logger log = LoggerFactory.getLogger(GroupMember.class);

    private final KafkaLockBackend backend;
    private final String lockName;
    private final String what;
    private final String clientId;
    private final TopicPartition partition;
    /** The holder text, stamped on the acquiring thread. */
    private final String holder;
    private final long sessionMs;
    /** Whether the marker precedes the commit: a lock's member. */
    private final boolean marksFirst;
    private final Duration bound;

    private boolean marked;
    private long token = -1;
    private long sentAt;

    GrantConfirmation(KafkaLockBackend backend, String lockName, String what, String clientId, TopicPartition partition,
            String holder, long sessionMs, boolean marksFirst) {
        this.backend = backend;
        this.lockName = lockName;
        this.what = what;
        this.clientId = clientId;
        this.partition = partition;
        this.holder = holder;
        this.sessionMs = sessionMs;
        this.marksFirst = marksFirst;
        this.bound = backend.options().timeout().dividedBy(2);
    }

    /** The member was assigned the partition anew: its grant needs a marker of its own. */
    void assigned() {
        marked = false;
    }

    /** Whether the member must append a marker before it commits: a lock's member, once per assignment. */
    boolean needsMarker() {
        return marksFirst && !marked;
    }

    /**
     * Appends a lock's grant marker.
     *
     * @return its offset, the fencing token
     * @throws io.latchkey.LockException why it failed; the acquire waiting for the member throws it
     */
    long mark() {
        try {
            token = backend.grantMarker(lockName, clientId + " " + holder);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendUnavailableException(lockName, what + " was granted, but its member was interrupted"
                    + " while writing the grant marker; the lock was released", e);
        }
        marked = true;
        return token;
    }

    /**
     * Commits offset 0 of the partition with the grant's record, as member {@code memberId}.
     *
     * @return whether the commit succeeded; {@link #sentAt()} then tells when it was sent. If it failed, the
     *     member does not hold yet and may try again while the partition stays assigned.
     * @throws org.apache.kafka.common.errors.WakeupException if the member was woken to leave
     */
    boolean commit(KafkaConsumer<byte[], byte[]> c, String memberId) {
        // a slot's marker follows this commit: its time tells an inspector where to look for the marker
        GrantMetadata grant = new GrantMetadata(holder, memberId, marksFirst ? token : -1, sessionMs,
                marksFirst ? -1 : System.currentTimeMillis());
        sentAt = System.nanoTime();
        try {
            try {
                c.commitSync(Map.of(partition, new OffsetAndMetadata(0L, grant.text())), bound);
            } catch (OffsetMetadataTooLarge e) {
                // the first commit's send still dates the evidence: the earlier date claims less
                log.warn("{}: the broker refused {} characters of metadata in the commit that confirms a grant (its"
                        + " offset.metadata.max.bytes is lower); committing without the holder text, which inspect"
                        + " then reports as unknown", what, grant.text().length());
                c.commitSync(Map.of(partition, new OffsetAndMetadata(0L, grant.withoutHolder())), bound);
            }
            return true;
        } catch (CommitFailedException | RebalanceInProgressException | RetriableException e) {
            log.debug("{}: member {} was assigned partition {}, but its commit failed; not holding yet", what, clientId,
                    partition, e);
            return false;
        }
    }

    /** When the last commit was sent, {@link System#nanoTime()}. */
    long sentAt() {
        return sentAt;
    }
}
