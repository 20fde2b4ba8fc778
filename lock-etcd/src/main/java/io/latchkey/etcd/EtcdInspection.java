package io.latchkey.etcd;

import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.latchkey.spi.GrantRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;

/**
 * Reads what etcd records of a lock's grant, for {@link EtcdLockBackend#inspect}: the key with the
 * lowest create revision under the lock's prefix, the holder by the rule of {@link EtcdQueue} (and of
 * Go's {@code concurrency.Mutex}), then the remaining TTL of the lease it is bound to.
 *
 * <p>The first read is one linearizable range request, sorted by create revision, limit 1: it writes
 * nothing, so inspecting a name nobody holds leaves no key, no lease and no watch behind. The key's
 * value is the holder text its writer put with it ({@link EtcdLease#value()}); a value that is no
 * holder text (a key of a Latchkey before holder identity, whose value was the lock name) gives a
 * {@code null} holder. The token is the key's create revision, the fencing token of that grant. The
 * second read, {@code LeaseTimeToLive}, is one more request that inspection alone pays (the acquire
 * path never asks it): etcd's remaining TTL of the key's lease, whole seconds rounded down, so never
 * past the moment etcd deletes the key. A lease that expired between the two reads reports
 * {@code -1}, read as zero: the grant read was on its way out. Both reads together wait at most the
 * {@code timeout} option, through {@link EtcdLockBackend#call}, so an unreachable etcd is a
 * {@link io.latchkey.LockBackendUnavailableException} within it.
 *
 * <p>The oldest key may belong to a contender whose client has not yet learnt that it holds (its
 * predecessor was just deleted, or its put's answer is still on the way): by etcd's record it holds,
 * and its client reports the grant a round trip later. Stateless; thread-safe.
 */
final class EtcdInspection {

    private static final GetOption OLDEST = GetOption.builder().isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).withLimit(1).build();

    private EtcdInspection() {
    }

    static Optional<GrantRecord> read(EtcdLockBackend backend, String lockName) throws InterruptedException {
        long start = System.nanoTime();
        KeyValue oldest = oldest(backend, lockName);
        return oldest == null ? Optional.empty() : Optional.of(record(backend, lockName, oldest, start));
    }

    /** The key with the lowest create revision under the lock's prefix, the holder's; null if there is none. */
    static KeyValue oldest(EtcdLockBackend backend, String lockName) throws InterruptedException {
        GetResponse r = backend.call(lockName, "reading the holder's key",
                backend.client().getKVClient().get(EtcdLockBackend.bytes(backend.prefix(lockName)), OLDEST));
        return r.getKvs().isEmpty() ? null : r.getKvs().get(0);
    }

    /** A range read of the lock's oldest key, as {@link #oldest} reads it, for a transaction. */
    static Op readOldest(EtcdLockBackend backend, String lockName) {
        return Op.get(EtcdLockBackend.bytes(backend.prefix(lockName)), OLDEST);
    }

    /**
     * The grant of the holder's key {@code kv}: its value, its create revision and the remaining TTL of
     * its lease, read within what is left of the {@code timeout} option since {@code startNanos}.
     */
    static GrantRecord record(EtcdLockBackend backend, String lockName, KeyValue kv, long startNanos)
            throws InterruptedException {
        String holder = kv.getValue().toString(StandardCharsets.UTF_8);
        long token = kv.getCreateRevision();
        if (kv.getLease() == 0) {
            // never written so by this backend: every key it puts is bound to a lease
            return new GrantRecord(holder, token, null);
        }
        LeaseTimeToLiveResponse lease = backend.call(lockName, backend.subject(lockName),
                "reading the TTL of lease " + Long.toHexString(kv.getLease()),
                backend.client().getLeaseClient().timeToLive(kv.getLease(), LeaseOption.DEFAULT),
                rest(backend, startNanos));
        return new GrantRecord(holder, token, Duration.ofSeconds(Math.max(0, lease.getTTL())));
    }

    /** What is left of the {@code timeout} option since {@code startNanos}; zero once it has passed. */
    static Duration rest(EtcdLockBackend backend, long startNanos) {
        Duration rest = backend.timeout().minusNanos(System.nanoTime() - startNanos);
        return rest.isNegative() ? Duration.ZERO : rest;
    }
}
