package io.latchkey.redis;

import static io.latchkey.redis.RedisKeys.permitKey;
import static io.latchkey.redis.RedisKeys.semaphoreKey;
import static io.latchkey.redis.RedisScripts.PERMIT_CHECK;

import io.latchkey.spi.Durations;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.PermitLease;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.redisson.api.RScript;
import org.redisson.client.codec.LongCodec;

/**
 * One permit of a semaphore: its slot, and through {@link RedisRenewed} its owner id, its token and the periodic
 * ownership check of its slot key.
 *
 * <p>Thread-safe: its own state is final; what a check and a release share is in {@link RedisRenewed}.
 */
final class RedisPermit extends RedisRenewed implements PermitLease {
    private final String name;
    private final String tag;
    private final int permits;
    private final int slot;

    RedisPermit(RedisLockBackend backend, String name, String tag, int permits, int slot, long owner, long token,
            LeaseEvidence evidence) {
        super(backend, evidence, owner, token);
        this.name = name;
        this.tag = tag;
        this.permits = permits;
        this.slot = slot;
    }

    @Override
    public int slot() {
        return slot;
    }

    @Override
    CompletableFuture<Long> renew() {
        String slotKey = permitKey(tag, slot);
        return backend.redisson.getScript(LongCodec.INSTANCE).<Long>evalAsync(slotKey, RScript.Mode.READ_WRITE, PERMIT_CHECK,
                RScript.ReturnType.LONG, List.of(slotKey, semaphoreKey(tag)), backend.field(owner), backend.leaseMillis, permits)
                .toCompletableFuture();
    }

    @Override
    String routingKey() {
        return permitKey(tag, slot);
    }

    @Override
    void addCheck(List<Object> keys, List<Object> args) {
        keys.add(permitKey(tag, slot));
        keys.add(semaphoreKey(tag));
        args.add("p");
        args.add(backend.field(owner));
        args.add(permits);
    }

    @Override
    String subject() {
        return "semaphore '" + name + "' permit " + slot + " (" + backend.describeSemaphore(name) + ")";
    }

    @Override
    String lostReason() {
        return "redis key '" + permitKey(tag, slot) + "' of " + backend.describeSemaphore(name) + " no longer holds this"
                + " permit's owner id: it expired (renewal failed for longer than the lease), was deleted, or a"
                + " failover promoted a replica that never received the grant";
    }

    @Override
    public void release() {
        ended = true;
        stopChecks();
        if (lostKey) {
            return; // the slot key holds someone else or nothing
        }
        String what = "while releasing permit " + slot + " of semaphore '" + name + "' (it expires on its own within "
                + Durations.format(backend.lease()) + ")";
        Long released = backend.await(backend.releasePermit(tag, backend.field(owner), slot, permits), name,
                "semaphore '" + name + "'", backend.whereSemaphore(name), what);
        log.debug("semaphore '{}' ({}) permit {} {}", name, backend.describeSemaphore(name), slot,
                released != null && released == 1 ? "released" : "was no longer held by this lease at release");
    }
}
