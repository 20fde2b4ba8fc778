package io.latchkey.redis;

import static io.latchkey.redis.RedisKeys.PERMIT_KEY_HEAD;
import static io.latchkey.redis.RedisKeys.permitKeyTail;
import static io.latchkey.redis.RedisKeys.semaphoreKey;
import static io.latchkey.redis.RedisScripts.PERMIT_INSPECT;

import io.latchkey.GrantTime;
import io.latchkey.spi.GrantRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.redisson.api.RScript;
import org.redisson.client.codec.StringCodec;

/**
 * The read of one semaphore's held slots for {@code DistributedSemaphore.inspect()}: one read-only script,
 * {@link RedisScripts#PERMIT_INSPECT}, over the semaphore's hash and its slot keys, all in the hash slot of
 * the semaphore's tag, sent as a plain EVAL to the master as a lock's inspect is.
 *
 * <p>A slot key's value is its grant as {@link RedisScripts#PERMIT_GRANT} writes it: the owner field, the
 * token, the server's {@code TIME} in ms and the holder text, a space apart (an owner field holds no space,
 * the holder text comes last and may hold any). A slot key of an older Latchkey holds the owner field alone:
 * held, by an unknown holder, with an unknown token and no grant time.
 *
 * <p>Thread-safe: its state is final, and a read shares nothing with another.
 */
final class RedisPermitInspection {

    private final RedisLockBackend backend;
    private final String name;
    private final String tag;

    RedisPermitInspection(RedisLockBackend backend, String name, String tag) {
        this.backend = backend;
        this.name = name;
        this.tag = tag;
    }

    /**
     * The held slots below {@code permits}, each with the grant its slot key holds and the key's PTTL as the
     * time Redis keeps it for a silent holder.
     *
     * @throws IllegalArgumentException if a slot of the semaphore is held with another number of permits
     * @throws io.latchkey.LockBackendUnavailableException if Redis does not answer within the timeout
     */
    Map<Integer, GrantRecord> read(int permits) throws InterruptedException {
        String key = semaphoreKey(tag);
        List<Object> reply = backend.awaitInterruptibly(backend.redisson.getScript(StringCodec.INSTANCE)
                        .<List<Object>>evalAsync(key, RScript.Mode.READ_WRITE, PERMIT_INSPECT, RScript.ReturnType.LIST,
                                List.of(key), permits, PERMIT_KEY_HEAD, permitKeyTail(tag))
                        .toCompletableFuture(),
                name, "semaphore '" + name + "'", backend.whereSemaphore(name),
                "while reading the permit slots of semaphore '" + name + "'");
        if (((Number) reply.get(0)).longValue() == MISMATCH) {
            throw backend.permitsMismatch(name, ((Number) reply.get(1)).longValue(), permits);
        }
        Map<Integer, GrantRecord> held = new TreeMap<>();
        for (int i = 1; i + 2 < reply.size(); i += 3) {
            int slot = Math.toIntExact(((Number) reply.get(i)).longValue());
            long ttl = ((Number) reply.get(i + 1)).longValue();
            held.put(slot, grant((String) reply.get(i + 2), ttl >= 0 ? Duration.ofMillis(ttl) : null));
        }
        return held;
    }

    /** What {@link RedisScripts#PERMIT_INSPECT} answers when the semaphore is held with another number. */
    private static final long MISMATCH = -2;

    /**
     * The record of a slot key's {@code value}: the holder text, token and grant time after the owner field, or
     * none of them for a value that is the owner field alone (an older Latchkey's) or that does not parse. A
     * read-write lock's grant is written alike ({@link RedisReadWrite#entry}) and read by this too.
     */
    static GrantRecord grant(String value, Duration expiresIn) {
        String[] parts = value.split(" ", 4);
        if (parts.length < 4) {
            return new GrantRecord(null, -1, expiresIn, -1, null);
        }
        try {
            long token = Long.parseLong(parts[1]);
            Instant since = Instant.ofEpochMilli(Long.parseLong(parts[2]));
            return new GrantRecord(parts[3].isEmpty() ? null : parts[3], token, expiresIn, -1,
                    new GrantTime(since, GrantTime.Source.BACKEND_AT_GRANT));
        } catch (NumberFormatException e) {
            return new GrantRecord(null, -1, expiresIn, -1, null);
        }
    }
}
