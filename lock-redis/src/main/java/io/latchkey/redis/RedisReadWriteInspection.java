package io.latchkey.redis;

import static io.latchkey.redis.RedisKeys.readersKey;
import static io.latchkey.redis.RedisKeys.writerKey;

import io.latchkey.spi.GrantRecord;
import io.latchkey.spi.ReadWriteRecords;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.redisson.api.RScript;
import org.redisson.client.codec.StringCodec;

/**
 * The read of one read-write lock's held grants for {@code DistributedReadWriteLock.inspect()}: one read-only
 * script, {@link #INSPECT}, over the writer key and the readers' sorted set, both under the name's hash tag, sent
 * as a plain EVAL to the master as a lock's inspect is, and bounded by the timeout.
 *
 * <p>Who holds is decided by the rule the grant script decides by ({@link RedisReadWrite#GRANT}): the writer
 * while its key exists, a reader while its entry's score (its expiry by the server's {@code TIME}) lies ahead.
 * A waiting writer or reader is only in the waiter queue, which this read does not look at. Each grant is the
 * writer key's value or the reader's entry ({@link RedisReadWrite#entry}), parsed as a permit's slot key value
 * ({@link RedisPermitInspection#grant}): the owner field, the token, the server's {@code TIME} in ms of the grant
 * and the holder text; a value of an older Latchkey, the owner field alone, is held by an unknown holder with an
 * unknown token and no grant time.
 *
 * <p>Thread-safe: its state is final, and a read shares nothing with another.
 */
final class RedisReadWriteInspection {

    /**
     * Inspection of a read-write lock, read-only. KEYS: readers, writer. Returns {1, PTTL, the writer key's value}
     * while the writer key exists; else {0} followed, for each reader's entry whose score lies ahead of the
     * server's {@code TIME}, by {ms until that score, the entry}. It writes nothing (its {@code TIME} is
     * allowed on every version, as in a lock's inspect), so a name nobody used stays without keys. The writer
     * comes first: readers counted beside a writer key could only come of a server clock that went back, and
     * the grant script then refuses every request because of the writer.
     */
    static final String INSPECT = "local wttl = redis.call('pttl', KEYS[2]); "
            + "if wttl ~= -2 then local v = redis.call('get', KEYS[2]); if v then return {1, wttl, v} end end; "
            + "local t = redis.call('time'); local now = t[1] * 1000 + math.floor(t[2] / 1000); "
            + "local held = {0}; "
            + "local r = redis.call('zrangebyscore', KEYS[1], '(' .. now, '+inf', 'withscores'); "
            + "for i = 1, #r, 2 do held[#held + 1] = tonumber(r[i + 1]) - now; held[#held + 1] = r[i] end; "
            + "return held";

    private final RedisLockBackend backend;
    private final String name;
    private final String tag;

    RedisReadWriteInspection(RedisLockBackend backend, String name, String tag) {
        this.backend = backend;
        this.name = name;
        this.tag = tag;
    }

    /**
     * The held grants: the writer alone, or the readers oldest first (by token, which every grant draws from
     * one rising counter; an older Latchkey's readers, without a token, first); {@link ReadWriteRecords#FREE}
     * if nobody holds.
     *
     * @throws io.latchkey.LockBackendUnavailableException if Redis does not answer within the timeout
     */
    ReadWriteRecords read() throws InterruptedException {
        String key = readersKey(tag);
        String where = "redis key '" + key + "' on " + backend.server();
        List<Object> reply = backend.awaitInterruptibly(backend.redisson.getScript(StringCodec.INSTANCE)
                        .<List<Object>>evalAsync(key, RScript.Mode.READ_WRITE, INSPECT, RScript.ReturnType.LIST,
                                List.of(key, writerKey(tag)))
                        .toCompletableFuture(),
                name, "read-write lock '" + name + "'", where,
                "while reading the readers and the writer of read-write lock '" + name + "'");
        if (((Number) reply.get(0)).longValue() == 1) {
            long ttl = ((Number) reply.get(1)).longValue();
            return new ReadWriteRecords(List.of(),
                    RedisPermitInspection.grant((String) reply.get(2), ttl >= 0 ? Duration.ofMillis(ttl) : null));
        }
        List<GrantRecord> readers = new ArrayList<>();
        for (int i = 1; i + 1 < reply.size(); i += 2) {
            long left = ((Number) reply.get(i)).longValue();
            readers.add(RedisPermitInspection.grant((String) reply.get(i + 1), Duration.ofMillis(Math.max(0, left))));
        }
        if (readers.isEmpty()) {
            return ReadWriteRecords.FREE;
        }
        readers.sort(Comparator.comparingLong(GrantRecord::token)); // stable: unknown tokens keep the expiry order
        return new ReadWriteRecords(readers, null);
    }
}
