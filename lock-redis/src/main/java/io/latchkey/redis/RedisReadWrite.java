package io.latchkey.redis;

import static io.latchkey.redis.RedisKeys.readWriteTokenKey;
import static io.latchkey.redis.RedisKeys.readWriteWaitersKey;
import static io.latchkey.redis.RedisKeys.readWriteWakeChannel;
import static io.latchkey.redis.RedisKeys.readersKey;
import static io.latchkey.redis.RedisKeys.writerKey;

import io.latchkey.redis.RedisContender.Contention;
import io.latchkey.redis.RedisContender.Granted;
import io.latchkey.spi.BackendLease;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.LeaseEvidence;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.redisson.api.RFuture;
import org.redisson.api.RScript;
import org.redisson.client.codec.LongCodec;
import org.redisson.client.protocol.RedisCommands;

/**
 * Read-write locks on Redis: one expiring entry per holder, so that one reader's crash never frees
 * another's, under one hash tag per name ({@link RedisKeys#readersKey} and its siblings), so that a Redis
 * Cluster runs every script of a name on one node.
 *
 * <p>The readers are a sorted set of grants scored by their expiry on the server's clock ({@code TIME}
 * in the scripts, so no client clock is compared with another): a reader's entry counts while its score
 * lies ahead, every script drops the entries behind it, and renewal moves only the reader's own score.
 * The writer is a key holding its grant with the lease as its time to live, as a lock's. A grant, the
 * entry or the writer key's value, is the owner field, the token, the server's {@code TIME} and the holder
 * text ({@link #entry}), which {@link RedisReadWriteInspection} reads back; an older Latchkey wrote the
 * owner field alone, and the scripts still take such a writer key as its owner's. A grant
 * draws its token from one counter per name, so a write's token is above every earlier grant and a
 * read's above every earlier write. Owner fields begin with {@code r:} or {@code w:}, so the waiter queue
 * (a lock's, scored by when an entry goes stale) tells the waiting writers from the readers:
 * <ul>
 *   <li>a write is granted while no writer holds and no reader's entry counts;</li>
 *   <li>a read while no writer holds and no writer waits, so that readers arriving after a waiting
 *       writer queue behind it (a writer that died waiting stops holding them back once its entry goes
 *       stale, within its own next attempt plus a timeout);</li>
 *   <li>a release that leaves nobody holding wakes the first waiting writer, or, if none waits, every
 *       waiting reader: the waiters that can now run and no others. A release that leaves readers
 *       holding wakes nobody, since only a writer can be waiting then. A writer that stops waiting
 *       (its wait over, an error, an interrupt) wakes the readers it held back, unless another writer
 *       holds or waits.</li>
 * </ul>
 * Waiting, bounds, abandoned attempts and the reconnection wake-up are {@link RedisContender}'s, as for
 * a lock; a grant is renewed, lost and released as a lock's ({@link RedisRenewed}).
 *
 * <p>Thread-safe: it holds the backend only.
 */
final class RedisReadWrite {

    /**
     * Lua: with no writer holding, wakes every waiting reader (waiters KEYS[4], wake channel KEYS[5]) unless
     * a writer still waits, which they stay behind: what a writer that leaves the queue owes the readers
     * it held back.
     */
    static final String READERS_BEHIND_NO_WRITER = RedisScripts.WAKE + "local w = false; "
            + "for _, f in ipairs(redis.call('zrange', KEYS[4], 0, -1)) do if string.sub(f, 1, 1) == 'w' then w = true end end; "
            + "if not w then for _, f in ipairs(redis.call('zrange', KEYS[4], 0, -1)) do "
            + "wake(KEYS[5], f) end end; ";

    /**
     * A waiter leaving the queue after an error or an interrupt. KEYS: readers, writer, token counter
     * (unused), waiters, wake channel; ARGV: the owner field. Removes its entry; a writer that leaves
     * wakes the readers it held back, as {@link #GRANT} does at the end of a writer's wait.
     */
    static final String LEAVE = "if redis.call('zrem', KEYS[4], ARGV[1]) == 1 and string.sub(ARGV[1], 1, 1) == 'w' "
            + "and redis.call('exists', KEYS[2]) == 0 then " + READERS_BEHIND_NO_WRITER + "end; return 1";

    /**
     * One attempt. KEYS: readers, writer, token counter, waiters, wake channel; ARGV: the lease in ms, the
     * owner field (its first letter the mode), how long to stay queued in ms (as {@link RedisScripts#GRANT}),
     * the timeout in ms, the holder text. Returns {token, lease, the server's TIME in ms} when granted, else
     * {-1, how long until the blocker's entry runs out, or -1} and queues the owner as a lock's attempt does;
     * a writer that leaves the queue so (its wait is over) wakes the readers it held back
     * ({@link #READERS_BEHIND_NO_WRITER}). The grant, the writer key's value or the reader's entry, is the
     * owner field, the token, that TIME and the holder text, a space apart ({@link #entry}): written by the
     * one SET or ZADD that grants, with the TIME the script reads anyway, and read back by
     * {@link RedisReadWriteInspection#INSPECT}.
     */
    static final String GRANT = RedisScripts.EFFECTS
            + "local t = redis.call('time'); local now = t[1] * 1000 + math.floor(t[2] / 1000); "
            + "redis.call('zremrangebyscore', KEYS[1], '-inf', now); "
            + "redis.call('zremrangebyscore', KEYS[4], '-inf', '(' .. now); "
            + "local write = string.sub(ARGV[2], 1, 1) == 'w'; "
            + "local wttl = redis.call('pttl', KEYS[2]); "
            + "local ttl = -1; "
            + "if wttl >= 0 then ttl = wttl "
            + "elseif write then "
            + "local r = redis.call('zrange', KEYS[1], 0, 0, 'withscores'); "
            + "if r[1] then ttl = math.max(1, tonumber(r[2]) - now) end "
            + "else "
            + "local q = redis.call('zrange', KEYS[4], 0, -1, 'withscores'); "
            + "for i = 1, #q, 2 do if string.sub(q[i], 1, 1) == 'w' and q[i] ~= ARGV[2] then "
            + "ttl = math.max(1, tonumber(q[i + 1]) - now); break end end end; "
            + "if wttl == -2 and ttl < 0 then "
            + "local token = redis.call('incr', KEYS[3]); "
            + "local lease = tonumber(ARGV[1]); "
            + "local grant = ARGV[2] .. ' ' .. string.format('%d', token) .. ' ' .. string.format('%d', now) .. ' ' "
            + ".. ARGV[5]; "
            + "if write then redis.call('set', KEYS[2], grant, 'px', lease) "
            + "else redis.call('zadd', KEYS[1], now + lease, grant); "
            + "if redis.call('pttl', KEYS[1]) < lease then redis.call('pexpire', KEYS[1], lease) end end; "
            + "if ARGV[3] ~= '-1' then redis.call('zrem', KEYS[4], ARGV[2]) end; "
            + "return {token, lease, now} end; "
            + "local q = tonumber(ARGV[3]); "
            + "if q > 0 then "
            + "if ttl >= 0 and ttl < q then q = ttl end; "
            + "local stale = q + tonumber(ARGV[4]); "
            + "redis.call('zadd', KEYS[4], now + stale, ARGV[2]); "
            + "if redis.call('pttl', KEYS[4]) < stale then redis.call('pexpire', KEYS[4], stale) end; "
            + "elseif q == 0 and redis.call('zrem', KEYS[4], ARGV[2]) == 1 and write and wttl == -2 then "
            + READERS_BEHIND_NO_WRITER + "end; "
            + "return {-1, ttl}";

    /**
     * The release. KEYS: readers, writer, waiters, wake channel; ARGV: the owner field, its grant as
     * {@link #GRANT} wrote it, or the empty string if unknown (the undo of an attempt whose answer was lost).
     * If the owner holds (the writer key's value is its grant or the owner field alone, as an older Latchkey
     * wrote it; or a reader's entry is its grant, or, the grant unknown, begins with the owner field and a
     * space, which only this undo looks for among all the readers), removes it and, if nobody holds any
     * more, wakes on their clients' channels the first waiting writer that listens, or else every waiting reader,
     * dropping the entries nobody listens to (as {@link RedisScripts#wakeFirstListening}); returns 1. Else
     * returns 0 and touches nothing.
     */
    static final String RELEASE = RedisScripts.EFFECTS
            + "local function holds(v) return v == ARGV[1] "
            + "or (v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. ' ') end; "
            + "if holds(redis.call('get', KEYS[2])) then redis.call('del', KEYS[2]) "
            + "elseif ARGV[2] ~= '' then if redis.call('zrem', KEYS[1], ARGV[2]) == 0 then return 0 end "
            + "else local mine = false; "
            + "for _, m in ipairs(redis.call('zrange', KEYS[1], 0, -1)) do "
            + "if holds(m) then redis.call('zrem', KEYS[1], m); mine = true; break end end; "
            + "if not mine then return 0 end end; "
            + "local t = redis.call('time'); local now = t[1] * 1000 + math.floor(t[2] / 1000); "
            + "redis.call('zremrangebyscore', KEYS[1], '-inf', now); "
            + "if redis.call('exists', KEYS[2]) == 1 or redis.call('zcard', KEYS[1]) > 0 then return 1 end; "
            + "redis.call('zremrangebyscore', KEYS[3], '-inf', '(' .. now); "
            + "local q = redis.call('zrange', KEYS[3], 0, -1); " + RedisScripts.WAKE
            + "for _, f in ipairs(q) do if string.sub(f, 1, 1) == 'w' then "
            + "if wake(KEYS[4], f) then return 1 end; "
            + "redis.call('zrem', KEYS[3], f) end end; "
            + "for _, f in ipairs(q) do if string.sub(f, 1, 1) == 'r' and not wake(KEYS[4], f) "
            + "then redis.call('zrem', KEYS[3], f) end end; "
            + "return 1";

    /**
     * Lua: defines {@code checkReadWrite(readers, writer, grant, lease)}, the renewal and confirmation of a grant in
     * one: if the owner of {@code grant} (as {@link #GRANT} wrote it, {@link #entry}) still holds, extends its entry
     * to {@code lease} ms and returns its remaining life in ms; else -3. A reader's entry whose score has passed is
     * lost, though no script removed it yet. It reads {@code TIME} before it writes: a script that calls it begins
     * with {@link RedisScripts#EFFECTS}.
     */
    static final String CHECK_GRANT = "local function checkReadWrite(readers, writer, grant, lease) "
            + "if redis.call('get', writer) == grant then "
            + "redis.call('pexpire', writer, lease); return redis.call('pttl', writer) end; "
            + "local t = redis.call('time'); local now = t[1] * 1000 + math.floor(t[2] / 1000); "
            + "local s = redis.call('zscore', readers, grant); "
            + "if not s or tonumber(s) <= now then return -3 end; "
            + "local l = tonumber(lease); "
            + "redis.call('zadd', readers, now + l, grant); "
            + "if redis.call('pttl', readers) < l then redis.call('pexpire', readers, l) end; "
            + "return l end; ";

    /** {@code checkReadWrite} of one grant. KEYS: readers, writer; ARGV: the grant, the lease in ms. */
    static final String CHECK = RedisScripts.EFFECTS + CHECK_GRANT + "return checkReadWrite(KEYS[1], KEYS[2], ARGV[1], ARGV[2])";

    private final RedisLockBackend backend;

    RedisReadWrite(RedisLockBackend backend) {
        this.backend = backend;
    }

    /** The tag of read-write lock {@code name}: the semaphore's kind of tag, under keys of its own. */
    String tag(String name) {
        return RedisKeys.semaphoreTag(backend.prefix(), name);
    }

    String describe(String name) {
        return "redis key '" + readersKey(tag(name)) + "'";
    }

    /** One acquire of a read ({@code write} false) or the write of {@code name}; null if not granted by the deadline. */
    BackendLease acquireOnce(String name, boolean write, Deadline deadline, LeaseEvidence evidence)
            throws InterruptedException {
        String tag = tag(name);
        String subject = (write ? "write lock '" : "read lock '") + name + "'";
        long owner = backend.nextOwner();
        String field = (write ? "w:" : "r:") + backend.field(owner);
        String holder = backend.stamp.forCurrentThread();
        Contention mode = new Contention(subject, name, describe(name) + " on " + backend.server(),
                readWriteWaitersKey(tag), readWriteWakeChannel(tag), false) {
            @Override
            RFuture<List<Long>> send(String f, long queueFor) {
                String key = readersKey(tag);
                return backend.commands().syncedEvalNoRetry(key, LongCodec.INSTANCE, RedisCommands.EVAL_LONG_LIST, GRANT,
                        keys(tag), backend.leaseMillis, f, queueFor, backend.timeout().toMillis(), holder);
            }

            @Override
            boolean leave(String f) {
                String key = readersKey(tag);
                backend.redisson.getScript(LongCodec.INSTANCE).evalAsync(key, RScript.Mode.READ_WRITE, LEAVE,
                        RScript.ReturnType.LONG, keys(tag), f);
                return true;
            }

            @Override
            void undo(String f) {
                release(tag, f, "");
            }
        };
        Granted granted = backend.contender().contend(mode, field, deadline);
        if (granted == null) {
            return null;
        }
        long token = granted.reply().get(0);
        long ttl = granted.reply().get(1);
        String grant = entry(field, token, granted.reply().get(2), holder);
        evidence.confirmed(granted.sentAt(), ttl < 0 ? backend.lease() : Duration.ofMillis(ttl));
        Held held = new Held(this, name, subject, tag, field, grant, owner, token, evidence);
        held.start();
        RedisRenewed.log.debug("{} ({}) acquired with token {}", subject, describe(name), token);
        return held;
    }

    /** The keys of {@link #GRANT} and {@link #LEAVE}, all under the name's hash tag. */
    private static List<Object> keys(String tag) {
        return List.of(readersKey(tag), writerKey(tag), readWriteTokenKey(tag), readWriteWaitersKey(tag),
                readWriteWakeChannel(tag));
    }

    /**
     * The grant {@link #GRANT} writes for {@code field}: the owner field, the token, the server's TIME in ms
     * and the holder text, a space apart, as Lua's {@code %d} writes the numbers. A holder's check and release
     * name its entry by it; an owner field holds no space, the holder text comes last and may hold any.
     */
    static String entry(String field, long token, long since, String holder) {
        return field + " " + token + " " + since + " " + holder;
    }

    /** {@link #RELEASE} of {@code field}'s grant {@code grant} (empty: unknown, found by the owner field). */
    CompletableFuture<Long> release(String tag, String field, String grant) {
        String key = readersKey(tag);
        return backend.redisson.getScript(LongCodec.INSTANCE).<Long>evalAsync(key, RScript.Mode.READ_WRITE, RELEASE,
                RScript.ReturnType.LONG, List.of(key, writerKey(tag), readWriteWaitersKey(tag), readWriteWakeChannel(tag)),
                field, grant).toCompletableFuture();
    }

    /** A held read or write grant: its entry, renewed and released as a lock's key. */
    private static final class Held extends RedisRenewed implements BackendLease {
        private final RedisReadWrite rw;
        private final String name;
        private final String subject;
        private final String tag;
        private final String field;
        /** The writer key's value or the reader's entry while this grant lasts ({@link #entry}). */
        private final String grant;

        Held(RedisReadWrite rw, String name, String subject, String tag, String field, String grant, long owner,
                long token, LeaseEvidence evidence) {
            super(rw.backend, evidence, owner, token);
            this.rw = rw;
            this.name = name;
            this.subject = subject;
            this.tag = tag;
            this.field = field;
            this.grant = grant;
        }

        @Override
        CompletableFuture<Long> renew() {
            String key = readersKey(tag);
            return backend.redisson.getScript(LongCodec.INSTANCE).<Long>evalAsync(key, RScript.Mode.READ_WRITE, CHECK,
                    RScript.ReturnType.LONG, List.of(key, writerKey(tag)), grant, backend.leaseMillis)
                    .toCompletableFuture();
        }

        @Override
        String routingKey() {
            return readersKey(tag);
        }

        @Override
        void addCheck(List<Object> keys, List<Object> args) {
            keys.add(readersKey(tag));
            keys.add(writerKey(tag));
            args.add("r");
            args.add(grant);
        }

        @Override
        String subject() {
            return subject + " (" + rw.describe(name) + ")";
        }

        @Override
        String lostReason() {
            return "redis keys of " + rw.describe(name) + " no longer hold this " + subject + "'s grant: it expired"
                    + " (renewal failed for longer than the lease), was deleted, or a failover promoted a replica that"
                    + " never received the grant";
        }

        @Override
        public void release() {
            ended = true;
            stopChecks();
            if (lostKey) {
                return;
            }
            String what = "while releasing " + subject + " (it expires on its own within "
                    + io.latchkey.spi.Durations.format(backend.lease()) + ")";
            Long released = backend.await(rw.release(tag, field, grant), name, subject,
                    rw.describe(name) + " on " + backend.server(), what);
            RedisRenewed.log.debug("{} ({}) {}", subject, rw.describe(name),
                    released != null && released == 1 ? "released" : "was no longer held by this lease at release");
        }
    }
}
