package io.latchkey.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.latchkey.spi.GrantRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Reads what etcd records of a lock's grant, for {@link EtcdLockBackend#inspect}: the key with the
 * lowest create revision under the lock's prefix, the holder by the rule of {@link EtcdQueue} (and of
 * Go's {@code concurrency.Mutex}), then the remaining TTL of the lease it is bound to.
 *
 * <p>The first read is one read-only transaction (a linearizable read, no Raft commit) of two range
 * reads of the lock's prefix at one revision: its oldest key, sorted by create revision, limit 1, and
 * the names of all its keys (keys only), which give the waiters. It writes nothing, so inspecting a
 * name nobody holds leaves no key, no lease and no watch behind. The key's value is the holder text its
 * writer put with it ({@link EtcdLease#value()}); a value that is no holder text (a key of a Latchkey
 * before holder identity, whose value was the lock name) gives a {@code null} holder. The token is the
 * key's create revision, the fencing token of that grant. The second read, {@code LeaseTimeToLive}, is
 * one more request that inspection alone pays (the acquire path never asks it): etcd's remaining TTL
 * of the key's lease, whole seconds rounded down, so never past the moment etcd deletes the key. A
 * lease that expired between the two reads reports {@code -1}, read as zero: the grant read was on its
 * way out. Both reads together wait at most the {@code timeout} option, through
 * {@link EtcdLockBackend#call}, so an unreachable etcd is a
 * {@link io.latchkey.LockBackendUnavailableException} within it.
 *
 * <p>The waiters are the queue's keys other than the oldest: keys {@code <prefix><lease id>-<sequence>}
 * ({@code <lease id>} from older versions). The lock's prefix ends with the '/' after its escaped name,
 * and escaped names hold no '/', so no key of another lock ('a/b', 'ab'), of a semaphore or read-write
 * lock, nor the schedule slot key beside the queue is under it; but a client whose namespace is
 * {@code <namespace><escaped name>/} puts its keys under it too, with a further '/', and those wait for
 * no grant of this lock, so they are not counted (which is why the names are read, not only etcd's
 * {@code count} of the range, which would include them). Every counted key is a contender's that has
 * not given up: a waiter that gives up deletes its key at once; one that gave up while etcd was
 * unreachable, or whose process died, is counted until its delete (resent at its client's next
 * keepalives) or the expiry of its lease removes the key.
 *
 * <p>The oldest key may belong to a contender whose client has not yet learnt that it holds (its
 * predecessor was just deleted, or its put's answer is still on the way): by etcd's record it holds,
 * and its client reports the grant a round trip later. Stateless; thread-safe.
 */
final class EtcdInspection {

    private static final GetOption OLDEST = GetOption.builder().isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).withLimit(1).build();
    /** Every key's name under a prefix, in the key order etcd keeps them in (no sorting). */
    private static final GetOption NAMES = GetOption.builder().isPrefix(true).withKeysOnly(true).build();

    private EtcdInspection() {
    }

    static Optional<GrantRecord> read(EtcdLockBackend backend, String lockName) throws InterruptedException {
        long start = System.nanoTime();
        Head head = oldest(backend, lockName);
        return head == null ? Optional.empty() : Optional.of(record(backend, lockName, head, start));
    }

    /**
     * The key with the lowest create revision under a lock's prefix, the holder's, and how many other
     * keys of the lock's queue the same read found, the waiters queued behind it.
     */
    record Head(KeyValue key, int waiters) {
    }

    /**
     * The holder's key and its waiters, as one read-only transaction of {@link #readHead} answers them
     * (a linearizable read, no Raft commit); null if there is no key.
     */
    static Head oldest(EtcdLockBackend backend, String lockName) throws InterruptedException {
        TxnResponse r = backend.call(lockName, "reading the holder's key and the queue",
                backend.client().getKVClient().txn().Then(readHead(backend, lockName)).commit());
        return head(backend, lockName, r.getGetResponses());
    }

    /**
     * The two range reads of a lock's prefix, for a transaction: its oldest key, with its value, and the
     * names of all its keys, which {@link #head} counts.
     */
    static Op[] readHead(EtcdLockBackend backend, String lockName) {
        ByteSequence prefix = EtcdLockBackend.bytes(backend.prefix(lockName));
        return new Op[] {Op.get(prefix, OLDEST), Op.get(prefix, NAMES)};
    }

    /**
     * The head of the queue from the answers {@code reads} to {@link #readHead}; null if the prefix is
     * empty. The waiters are the keys named {@code <prefix><lease id>-<sequence>} (or {@code <lease id>}
     * of an older version) other than the oldest: a key with a further '/' after the prefix belongs to a
     * client whose namespace is {@code <namespace><escaped name>/}, and waits for no grant of this lock.
     */
    static Head head(EtcdLockBackend backend, String lockName, List<GetResponse> reads) {
        List<KeyValue> oldest = reads.get(0).getKvs();
        if (oldest.isEmpty()) {
            return null;
        }
        KeyValue first = oldest.get(0);
        int prefix = EtcdLockBackend.bytes(backend.prefix(lockName)).size();
        int waiters = 0;
        for (KeyValue kv : reads.get(1).getKvs()) {
            if (!kv.getKey().equals(first.getKey()) && EtcdAdmin.QUEUED.matcher(
                    kv.getKey().substring(prefix).toString(StandardCharsets.UTF_8)).matches()) {
                waiters++;
            }
        }
        return new Head(first, waiters);
    }

    /**
     * The grant of the holder's key {@code head}: its value, its create revision, the remaining TTL of
     * its lease, read within what is left of the {@code timeout} option since {@code startNanos}, and
     * the waiters the same read counted behind it.
     */
    static GrantRecord record(EtcdLockBackend backend, String lockName, Head head, long startNanos)
            throws InterruptedException {
        KeyValue kv = head.key();
        String holder = kv.getValue().toString(StandardCharsets.UTF_8);
        long token = kv.getCreateRevision();
        if (kv.getLease() == 0) {
            // never written so by this backend: every key it puts is bound to a lease
            return new GrantRecord(holder, token, null, head.waiters());
        }
        LeaseTimeToLiveResponse lease = backend.call(lockName, backend.subject(lockName),
                "reading the TTL of lease " + Long.toHexString(kv.getLease()),
                backend.client().getLeaseClient().timeToLive(kv.getLease(), LeaseOption.DEFAULT),
                rest(backend, startNanos));
        return new GrantRecord(holder, token, Duration.ofSeconds(Math.max(0, lease.getTTL())), head.waiters());
    }

    /** What is left of the {@code timeout} option since {@code startNanos}; zero once it has passed. */
    static Duration rest(EtcdLockBackend backend, long startNanos) {
        Duration rest = backend.timeout().minusNanos(System.nanoTime() - startNanos);
        return rest.isNegative() ? Duration.ZERO : rest;
    }

    /**
     * The remaining TTL of each lease {@code keys} are bound to, asked of etcd all at once (one request per
     * lease, however many keys share it) and awaited within what is left of the {@code timeout} option since
     * {@code startNanos}: whole seconds rounded down, zero for a lease that ended since the keys were read.
     * No entry for lease 0 (this backend binds every key to a lease, so none is expected).
     */
    static Map<Long, Duration> ttls(EtcdLockBackend backend, String name, String subject, Collection<KeyValue> keys,
            long startNanos) throws InterruptedException {
        Map<Long, CompletableFuture<LeaseTimeToLiveResponse>> asked = new HashMap<>();
        for (KeyValue kv : keys) {
            if (kv.getLease() != 0 && !asked.containsKey(kv.getLease())) {
                asked.put(kv.getLease(),
                        backend.client().getLeaseClient().timeToLive(kv.getLease(), LeaseOption.DEFAULT));
            }
        }
        Map<Long, Duration> left = new HashMap<>();
        try {
            for (Map.Entry<Long, CompletableFuture<LeaseTimeToLiveResponse>> e : asked.entrySet()) {
                LeaseTimeToLiveResponse ttl = backend.call(name, subject, "reading the TTL of lease "
                        + Long.toHexString(e.getKey()), e.getValue(), rest(backend, startNanos));
                left.put(e.getKey(), Duration.ofSeconds(Math.max(0, ttl.getTTL())));
            }
        } finally {
            asked.values().forEach(f -> f.cancel(true)); // those not awaited, after a failure: nobody reads them
        }
        return left;
    }
}
