package io.latchkey.redis;

import static io.latchkey.redis.RedisScripts.CHECK;
import static io.latchkey.redis.RedisScripts.LINGER;
import static io.latchkey.redis.RedisScripts.RECORD_SLOT;

import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LeaseEvidence;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.redisson.api.RFuture;
import org.redisson.api.RScript;
import org.redisson.client.codec.LongCodec;

/**
 * One grant of a lock: its key, and through {@link RedisRenewed} its owner id, its token and the periodic ownership
 * check, sent with the other grants held in its hash slot by {@link RedisRenewals}.
 *
 * <p>Thread-safe: its own state is final; what a check and a release share is in {@link RedisRenewed}.
 */
final class RedisLease extends RedisRenewed implements BackendLease {
    private final String lockName;
    private final String key;

    RedisLease(RedisLockBackend backend, String lockName, String key, long owner, long token, LeaseEvidence evidence) {
        super(backend, evidence, owner, token);
        this.lockName = lockName;
        this.key = key;
    }

    @Override
    String routingKey() {
        return key;
    }

    @Override
    void addCheck(List<Object> keys, List<Object> args) {
        keys.add(key);
        args.add("l");
        args.add(backend.field(owner));
    }

    /** {@link RedisScripts#CHECK} of this lock alone: for a slot where it is the only grant held, or a batch refused. */
    @Override
    CompletableFuture<Long> renew() {
        RScript script = backend.redisson.getScript(LongCodec.INSTANCE);
        RFuture<Long> f = script.evalAsync(key, RScript.Mode.READ_WRITE, CHECK, RScript.ReturnType.LONG,
                List.of(key), backend.field(owner), backend.leaseMillis);
        return f.toCompletableFuture();
    }

    @Override
    String subject() {
        return "lock '" + lockName + "' (" + backend.describe(lockName) + ")";
    }

    @Override
    String lostReason() {
        return backend.describe(lockName) + " no longer holds this lease's owner id:"
                + " the grant was ended on the backend (deleted, for example force-released by another client), it"
                + " expired (renewal failed for longer than the lease), or a failover promoted a replica that never"
                + " received the grant";
    }

    /** atLeast by the key's own expiry: it outlives this process, and nothing renews it any more. */
    @Override
    public boolean releaseAfter(Duration remaining) {
        ended = true;
        stopChecks();
        if (lostKey) {
            return true;
        }
        long millis = Math.max(1, (remaining.toNanos() + 999_999) / 1_000_000);
        Long kept = await(backend.redisson.getScript(LongCodec.INSTANCE).<Long>evalAsync(key, RScript.Mode.READ_WRITE, LINGER,
                RScript.ReturnType.LONG, List.of(key), backend.field(owner), token, millis)
                .toCompletableFuture(), "while handing the atLeast bound of lock '" + lockName + "' to the key's expiry");
        log.debug("lock '{}' ({}) {} for its atLeast bound, {} ms", lockName, backend.describe(lockName),
                kept == 1 ? "left to expire" : "was no longer held", millis);
        return true;
    }

    @Override
    public boolean recordsSlots() {
        return true;
    }

    @Override
    public java.util.Optional<java.time.Instant> lastCompletedSlot() {
        String slotKey = backend.slotKey(lockName);
        Object slot = await(backend.redisson.getScript(org.redisson.client.codec.StringCodec.INSTANCE).<Object>evalAsync(slotKey,
                RScript.Mode.READ_ONLY, "return redis.call('hget', KEYS[1], 'slot')", RScript.ReturnType.VALUE,
                List.of(slotKey)).toCompletableFuture(), "while reading the last completed slot of lock '" + lockName + "'");
        return slot == null ? java.util.Optional.empty() : java.util.Optional.of(java.time.Instant.parse(slot.toString()));
    }

    @Override
    public void recordCompletedSlot(java.time.Instant slot) {
        Long written = await(backend.redisson.getScript(LongCodec.INSTANCE).<Long>evalAsync(key, RScript.Mode.READ_WRITE,
                RECORD_SLOT, RScript.ReturnType.LONG, List.of(key, backend.slotKey(lockName)),
                backend.field(owner), token, slot.toString()).toCompletableFuture(),
                "while recording slot " + slot + " of lock '" + lockName + "'");
        if (written != 1) {
            throw new io.latchkey.LockLostException(lockName, "lock '" + lockName + "' (" + backend.describe(lockName)
                    + ") refused to record slot " + slot + " for token " + token + ": the key no longer holds this"
                    + " lease, or a later holder recorded a slot; the slot may run again elsewhere");
        }
    }

    private <T> T await(CompletableFuture<T> f, String what) {
        return backend.await(f, lockName, "lock '" + lockName + "'", backend.where(lockName), what);
    }

    @Override
    public void release() {
        ended = true;
        stopChecks();
        if (lostKey) {
            return; // the key holds someone else or nothing
        }
        String what = "while releasing lock '" + lockName + "' (it expires on its own within "
                + Durations.format(backend.lease()) + ")";
        Long released = await(backend.release(key, backend.field(owner)), what);
        if (released != null && released == 1) {
            log.debug("lock '{}' ({}) released", lockName, backend.describe(lockName));
        } else {
            log.debug("lock '{}' ({}) was no longer held by this lease at release", lockName, backend.describe(lockName));
        }
    }
}
