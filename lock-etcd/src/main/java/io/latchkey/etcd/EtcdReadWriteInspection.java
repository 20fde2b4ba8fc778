package io.latchkey.etcd;

import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.latchkey.spi.GrantRecord;
import io.latchkey.spi.ReadWriteRecords;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads what etcd records of a read-write lock's held grants, for {@link EtcdLockBackend#inspectReadWrite}: the
 * reader and writer keys under the lock's prefix ({@link EtcdReadWrite}), who of them holds by the queue's own
 * rule, then the remaining TTL of the leases they are bound to, as {@link EtcdInspection} reads a lock.
 *
 * <p>The first read is one range read of the whole prefix sorted by create revision (a linearizable read, no
 * Raft commit), so every key is seen at one revision. Who holds is decided exactly as {@link EtcdQueue} grants:
 * a writer's key holds if no key under the prefix has a lower create revision, a reader's key if no key under
 * the writers' prefix {@code w/} has a lower one. So a writer queued behind readers holds nothing, nor does a
 * reader queued behind a waiting writer, and a reader or writer whose client has not yet learnt that its
 * blocker went holds by etcd's record (its client reports the grant a round trip later), as a waiter that gave
 * up while etcd was unreachable blocks, and so is read, until its resent delete or its lease removes its key.
 * A key under the prefix that is no reader's or writer's key ({@code r/} or {@code w/}, then
 * {@code <lease id>-<sequence>}: a client whose namespace is the lock's prefix puts its keys there) blocks as
 * the queue counts it, but is listed as no grant.
 *
 * <p>Each held key gives a {@link GrantRecord}: its value, the holder text its writer put in the transaction
 * that queued it (a value that is no holder text gives an unknown holder), its create revision, exactly the
 * {@code fencingToken()} of its lease, and the TTL left of the etcd lease it is bound to, from
 * {@code LeaseTimeToLive} (one request per holding client, sent together, {@link EtcdInspection#ttls}). etcd
 * keeps no time of a key, so no grant time is given: the shared layer takes the holder text's {@code at=}.
 * Readers come oldest first. All reads together wait at most the {@code timeout} option; none writes, so
 * inspecting a read-write lock nobody uses leaves no key, lease or watch. Stateless; thread-safe.
 */
final class EtcdReadWriteInspection {

    /** Sorted by create revision, oldest first, the order of {@link EtcdQueue}. */
    private static final GetOption BY_CREATE = GetOption.builder().isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).build();

    private EtcdReadWriteInspection() {
    }

    /**
     * The held grants of read-write lock {@code name}, whose keys lie under {@code prefix}, read within the
     * {@code timeout} option; messages begin with {@code subject}.
     */
    static ReadWriteRecords read(EtcdLockBackend backend, String name, String prefix, String subject)
            throws InterruptedException {
        long start = System.nanoTime();
        GetResponse r = backend.call(name, subject, "reading the reader and writer keys",
                backend.client().getKVClient().get(EtcdLockBackend.bytes(prefix), BY_CREATE));
        List<KeyValue> readers = new ArrayList<>();
        KeyValue writer = null;
        boolean older = false; // a key with a lower create revision than the one at hand, which blocks a writer
        for (KeyValue kv : r.getKvs()) {
            String rest = kv.getKey().toString(StandardCharsets.UTF_8).substring(prefix.length());
            if (rest.startsWith(EtcdReadWrite.WRITERS)) {
                if (!older && isGrant(rest)) {
                    writer = kv;
                }
                break; // every later key waits behind a key under w/: a writer behind any key, a reader behind it
            }
            if (isGrant(rest)) {
                readers.add(kv); // a reader's key, and no key under w/ is older
            }
            older = true;
        }
        List<KeyValue> held = new ArrayList<>(readers);
        if (writer != null) {
            held.add(writer);
        }
        if (held.isEmpty()) {
            return ReadWriteRecords.FREE;
        }
        Map<Long, Duration> left = EtcdInspection.ttls(backend, name, subject, held, start);
        return new ReadWriteRecords(readers.stream().map(kv -> record(kv, left)).toList(),
                writer == null ? null : record(writer, left));
    }

    /**
     * Whether {@code rest}, what follows the lock's prefix in a key, names a reader's or writer's key as
     * {@link EtcdReadWrite} names them: {@code r/} or {@code w/}, then {@code <lease id>-<sequence>}.
     */
    private static boolean isGrant(String rest) {
        return (rest.startsWith(EtcdReadWrite.READERS) || rest.startsWith(EtcdReadWrite.WRITERS))
                && EtcdAdmin.QUEUED.matcher(rest.substring(EtcdReadWrite.READERS.length())).matches();
    }

    /** The grant of held key {@code kv}: its holder text, its create revision, its lease's time left; no time. */
    private static GrantRecord record(KeyValue kv, Map<Long, Duration> left) {
        return new GrantRecord(kv.getValue().toString(StandardCharsets.UTF_8), kv.getCreateRevision(),
                left.get(kv.getLease()), -1, null);
    }
}
