package io.latchkey.redis;

/**
 * The Lua scripts of the Redis backend. Stateless.
 *
 * <p>Every key a script touches shares one cluster hash slot; the keys' names are {@link RedisKeys}'s.
 */
final class RedisScripts {

    private RedisScripts() {
    }

    /** Redis before 5 replicates scripts verbatim and refuses writes after TIME unless told to replicate effects. */
    static final String EFFECTS = "if redis.replicate_commands then redis.replicate_commands() end; ";

    /**
     * The field of a lock's hash that holds its grant's {@link io.latchkey.Holder} text: beside the
     * owner's field, which Redisson's own lock scripts also read, so that neither disturbs the other.
     */
    static final String HOLDER = "latchkey:holder";

    /** The field of a lock's hash that holds its grant's fencing token, for an inspector. */
    static final String TOKEN = "latchkey:token";

    /** The field of a lock's hash that holds the moment of its grant, in ms of the server's {@code TIME}. */
    static final String SINCE = "latchkey:since";

    /**
     * One attempt. KEYS: the lock, the token counter, the waiter queue; ARGV: the lease in ms, the owner
     * field, how long to stay queued in ms ({@code -1}: never queued, {@code 0}: leave the queue), the
     * timeout in ms, the holder text. If the lock key does not exist, increments the counter, takes the key
     * for the owner with the lease, records the holder, the token and the server's time beside the owner's
     * field ({@link #HOLDER}, {@link #TOKEN}, {@link #SINCE}; one HSET of four fields, which needs Redis 4),
     * leaves the queue and returns {token, PTTL}, the PTTL read after the grant by the
     * same script. Else returns {-1, PTTL of the holder's key} and queues the owner (or refreshes its
     * entry) until the moment it will try again by itself plus one timeout, in server time: a waiter
     * that died or gave up without leaving drops out of the queue by then.
     */
    static final String GRANT = EFFECTS
            + "if redis.call('exists', KEYS[1]) == 0 then "
            + "local token = redis.call('incr', KEYS[2]); "
            + "local now = redis.call('time'); "
            + "redis.call('hset', KEYS[1], ARGV[2], 1, '" + HOLDER + "', ARGV[5], '" + TOKEN + "', token, '"
            + SINCE + "', now[1] * 1000 + math.floor(now[2] / 1000)); "
            + "redis.call('pexpire', KEYS[1], ARGV[1]); "
            + "if ARGV[3] ~= '-1' then redis.call('zrem', KEYS[3], ARGV[2]) end; "
            + "return {token, redis.call('pttl', KEYS[1])} end; "
            + "local ttl = redis.call('pttl', KEYS[1]); "
            + "local q = tonumber(ARGV[3]); "
            + "if q > 0 then "
            + "if ttl >= 0 and ttl < q then q = ttl end; "
            + "local stale = q + tonumber(ARGV[4]); "
            + "local t = redis.call('time'); "
            + "redis.call('zadd', KEYS[3], t[1] * 1000 + math.floor(t[2] / 1000) + stale, ARGV[2]); "
            + "if redis.call('pttl', KEYS[3]) < stale then redis.call('pexpire', KEYS[3], stale) end; "
            + "elseif q == 0 then redis.call('zrem', KEYS[3], ARGV[2]) end; "
            + "return {-1, ttl}";

    /**
     * Inspection, read-only. KEYS: the lock, its waiter queue. Returns {-2} if the lock key does not exist,
     * else {PTTL, the token field, the holder field, the waiters, the since field}, a missing field as the
     * empty string (a
     * Redisson lock, or a grant of an older Latchkey, on the same key), the waiters as the queue's live
     * entries ({@link #readGrant}).
     */
    static final String INSPECT = readGrant() + "return grant";

    /**
     * Lua: returns {-2} if the lock key KEYS[1] does not exist, else reads its grant into the local
     * {@code grant} as {@link #INSPECT} returns it. The waiters are the entries of the queue KEYS[2] whose
     * score, the moment each goes stale, is not past the server's {@code TIME} ({@code ZCOUNT}, as
     * {@link #RELEASE} drops the others with {@code ZREMRANGEBYSCORE}): queued waiters, the holder not among
     * them as its grant took its entry out. It only reads, so its {@code TIME} is allowed on every version
     * (Redis before 5 refuses a write after {@code TIME}, see {@link #EFFECTS}).
     */
    private static String readGrant() {
        return "local ttl = redis.call('pttl', KEYS[1]); if ttl == -2 then return {-2} end; "
                + "local t = redis.call('time'); "
                + "local grant = {ttl, redis.call('hget', KEYS[1], '" + TOKEN + "') or '', "
                + "redis.call('hget', KEYS[1], '" + HOLDER + "') or '', "
                + "redis.call('zcount', KEYS[2], t[1] * 1000 + math.floor(t[2] / 1000), '+inf'), "
                + "redis.call('hget', KEYS[1], '" + SINCE + "') or ''}; ";
    }

    /**
     * Lua: the function {@code wake(c, f)}, which publishes queue entry {@code f} on its client's channel
     * under wake channel {@code c} (c, a colon and f up to its last colon: {@link RedisKeys#clientWakeChannel})
     * and returns whether a client heard it; if none did, on the entry's own channel (c, a colon and f), where
     * a waiter of an older Latchkey listens. An entry without a colon, which no Latchkey writes, has only
     * the second, so that it cannot fail the release that goes past it.
     */
    static final String WAKE = "local function wake(c, f) "
            + "return redis.call('publish', c .. ':' .. (string.match(f, '^(.*):') or f), f) > 0 "
            + "or redis.call('publish', c .. ':' .. f, f) > 0 end; ";

    /**
     * Lua: goes down the waiter queue {@code queue} in order and publishes each entry on its client's channel
     * under {@code channel} ({@link #WAKE}) until one client hears it; drops the entries nobody heard, waiters
     * gone without leaving the queue. Wakes one waiter that listens, or none if none does.
     */
    static String wakeFirstListening(String queue, String channel) {
        return WAKE + "for _, f in ipairs(redis.call('zrange', " + queue + ", 0, -1)) do "
                + "if wake(" + channel + ", f) then break end; "
                + "redis.call('zrem', " + queue + ", f) end; ";
    }

    /**
     * A client that heard a wake-up for an entry none of its waiters has (one it left behind) and has no
     * waiter on that channel: KEYS: the waiter queue, the wake channel; ARGV: the entry. If the entry is
     * still queued, drops it and wakes the next waiter that listens ({@link #wakeFirstListening}), so that
     * the release that named it wakes somebody; returns 1. Else (the entry left the queue since) returns 0.
     */
    static final String PASS_ON = "if redis.call('zrem', KEYS[1], ARGV[1]) == 0 then return 0 end; "
            + wakeFirstListening("KEYS[1]", "KEYS[2]") + "return 1";

    /**
     * The release. KEYS: the lock, the waiter queue, the wake channel, Redisson's lock channel; ARGV: the
     * owner field. If the key holds the owner, deletes it, drops the queue's stale entries, wakes the first
     * waiter that listens ({@link #wakeFirstListening}), and publishes Redisson's unlock message on Redisson's channel
     * (so that waiters of an older Latchkey, on Redisson's RFencedLock, are woken as before); returns 1.
     * Else returns 0 and touches nothing.
     */
    static final String RELEASE = EFFECTS
            + "if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return 0 end; "
            + deleteAndWake()
            + "return 1";

    /**
     * What {@link #RELEASE} and {@link #FORCE_RELEASE} do once they end a grant: delete the lock key, drop
     * the queue's stale entries, wake the first waiter that listens and publish Redisson's unlock message.
     */
    private static String deleteAndWake() {
        return "redis.call('del', KEYS[1]); "
                + "if redis.call('exists', KEYS[2]) == 1 then "
                + "local t = redis.call('time'); "
                + "redis.call('zremrangebyscore', KEYS[2], '-inf', '(' .. (t[1] * 1000 + math.floor(t[2] / 1000))); "
                + wakeFirstListening("KEYS[2]", "KEYS[3]") + "end; "
                + "redis.call('publish', KEYS[4], 0); ";
    }

    /**
     * The force release, an administrator's: ends whatever grant the lock key holds. KEYS as
     * {@link #RELEASE}'s. Returns {-2} and touches nothing if the key does not exist; else reads the grant
     * as {@link #INSPECT} does ({PTTL, token field, holder field, waiters, since field}), deletes the lock key alone and
     * wakes a waiter as {@link #RELEASE} does, and returns what it read. The token counter is not touched, so
     * the next grant's token is higher; the holder's next {@link #CHECK} no longer finds its owner field.
     */
    static final String FORCE_RELEASE = EFFECTS
            + readGrant()
            + deleteAndWake()
            + "return grant";

    /**
     * Listing, read-only. KEYS: a key found under the namespace. Returns 1 if it is a hash, the type of
     * every grant (this backend's, an older Latchkey's, a Redisson lock's on the same key), else 0: gone
     * since the scan, or some other kind of key.
     */
    static final String IS_GRANT = "if redis.call('type', KEYS[1]).ok == 'hash' then return 1 end; return 0";

    /**
     * Lua: defines {@code checkLock(key, field, lease)}, the renewal and the confirmation of a lock in one: if the
     * lock {@code key} still holds the owner {@code field}, extends it to {@code lease} ms and returns its remaining
     * life in ms; else -3.
     */
    private static final String CHECK_LOCK = "local function checkLock(key, field, lease) "
            + "if redis.call('hexists', key, field) == 1 then "
            + "redis.call('pexpire', key, lease); return redis.call('pttl', key) end; return -3 end; ";

    /** {@code checkLock} of one lock. KEYS: the lock; ARGV: the owner field, the lease in ms. */
    static final String CHECK = CHECK_LOCK + "return checkLock(KEYS[1], ARGV[1], ARGV[2])";

    /**
     * atLeast handed to Redis: if the key still holds the owner's field, swaps that field for one no
     * owner has (so that no late release or renewal of this owner touches it) and lets the key expire in
     * ARGV[3] ms. Returns 1, or 0 if the key no longer holds the owner.
     */
    static final String LINGER = "if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then "
            + "redis.call('hdel', KEYS[1], ARGV[1]); redis.call('hset', KEYS[1], 'latchkey:atLeast', ARGV[2]); "
            + "redis.call('pexpire', KEYS[1], ARGV[3]); return 1 end; return 0";

    /**
     * Once per slot: records ARGV[3] in the slot hash (KEYS[2]) only if the lock key (KEYS[1]) still
     * holds the owner's field and no higher token (ARGV[2]) wrote the record. Returns 1, or 0 if refused.
     */
    static final String RECORD_SLOT = "if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return 0 end; "
            + "local t = redis.call('hget', KEYS[2], 'token'); "
            + "if t and tonumber(t) > tonumber(ARGV[2]) then return 0 end; "
            + "redis.call('hset', KEYS[2], 'token', ARGV[2], 'slot', ARGV[3]); return 1";

    /** Lua: the table of the names of slots 0..n-1 from the slot key's head ARGV[h] and tail ARGV[t]. */
    private static String slots(String n, int head, int tail) {
        return "local slots = {}; for k = 0, " + n + " - 1 do slots[k + 1] = ARGV[" + head + "] .. k .. ARGV[" + tail
                + "] end; ";
    }

    /**
     * Lua: defines {@code holds(v, o)}, whether the value {@code v} of a slot key (or {@code false}, no key) is
     * the grant of the owner {@code o}: the owner alone, as an older Latchkey wrote it, or the owner, a space and
     * the rest of the grant ({@link #PERMIT_GRANT}); an owner field holds no space, so no owner is a prefix of
     * another's grant.
     */
    private static final String HOLDS = "local function holds(v, o) return v == o "
            + "or (v and string.sub(v, 1, #o + 1) == o .. ' ') end; ";

    /**
     * One attempt at a permit. KEYS: the semaphore's hash, its token counter, its waiter queue; ARGV: the
     * lease in ms, the owner, how long to stay queued in ms (as {@link #GRANT}), the timeout in ms, the
     * number of permits, the head and the tail of the slot keys (slot {@code k} is head..k..tail, in the
     * hash slot of the declared keys), the holder text. If the hash records another number of permits while
     * a slot of that number is held, returns {-2, that number, -1} and touches nothing. Else takes the
     * lowest free slot: increments the counter, sets the slot key to the grant with the lease as its time to
     * live, records the number of permits in the hash and lets it live at least as long as the slot, leaves
     * the queue, and returns {token, PTTL of the slot key, slot}. The grant, the slot key's value, is the
     * owner, the token, the server's {@code TIME} in ms and the holder text, a space apart: one SET, as
     * before, that {@link #PERMIT_INSPECT} reads back. With no slot free, returns {-1, the shortest PTTL of
     * the held slots, -1} and queues the owner exactly as {@link #GRANT} does. The slot keys are only read
     * before the one written, so a refusal by a cluster node leaves nothing half done.
     */
    static final String PERMIT_GRANT = EFFECTS
            + "local n = tonumber(ARGV[5]); "
            + "local known = tonumber(redis.call('hget', KEYS[1], 'permits')); "
            + "if known and known ~= n then "
            + slots("known", 6, 7)
            + "if redis.call('exists', unpack(slots)) > 0 then return {-2, known, -1} end end; "
            + "local soonest = -1; "
            + "for k = 0, n - 1 do "
            + "local slot = ARGV[6] .. k .. ARGV[7]; "
            + "local ttl = redis.call('pttl', slot); "
            + "if ttl == -2 then "
            + "local token = redis.call('incr', KEYS[2]); "
            + "local now = redis.call('time'); "
            + "redis.call('set', slot, ARGV[2] .. ' ' .. string.format('%d', token) .. ' ' "
            + ".. string.format('%d', now[1] * 1000 + math.floor(now[2] / 1000)) .. ' ' .. ARGV[8], 'px', ARGV[1]); "
            + "if known ~= n then redis.call('hset', KEYS[1], 'permits', n) end; "
            + "if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then redis.call('pexpire', KEYS[1], ARGV[1]) end; "
            + "if ARGV[3] ~= '-1' then redis.call('zrem', KEYS[3], ARGV[2]) end; "
            + "return {token, redis.call('pttl', slot), k} end; "
            + "if ttl >= 0 and (soonest < 0 or ttl < soonest) then soonest = ttl end end; "
            + "local q = tonumber(ARGV[3]); "
            + "if q > 0 then "
            + "if soonest >= 0 and soonest < q then q = soonest end; "
            + "local stale = q + tonumber(ARGV[4]); "
            + "local t = redis.call('time'); "
            + "redis.call('zadd', KEYS[3], t[1] * 1000 + math.floor(t[2] / 1000) + stale, ARGV[2]); "
            + "if redis.call('pttl', KEYS[3]) < stale then redis.call('pexpire', KEYS[3], stale) end; "
            + "elseif q == 0 then redis.call('zrem', KEYS[3], ARGV[2]) end; "
            + "return {-1, soonest, -1}";

    /**
     * The release of a permit. KEYS: the semaphore's hash, its waiter queue, its wake channel; ARGV: the
     * owner, its slot ({@code -1}: whichever slot holds the owner, for an attempt whose answer was lost),
     * the head and tail of the slot keys, the number of permits (if the hash is gone). If the slot key
     * holds the owner's grant ({@link #HOLDS}), deletes it, deletes the hash once no slot is held, and wakes
     * the first live waiter as {@link #RELEASE} does; returns 1. Else returns 0 and touches nothing.
     */
    static final String PERMIT_RELEASE = EFFECTS + HOLDS
            + "local n = tonumber(redis.call('hget', KEYS[1], 'permits')) or tonumber(ARGV[5]); "
            + "local mine = nil; "
            + "if ARGV[2] ~= '-1' then "
            + "local s = ARGV[3] .. ARGV[2] .. ARGV[4]; if holds(redis.call('get', s), ARGV[1]) then mine = s end "
            + "else for k = 0, n - 1 do "
            + "local s = ARGV[3] .. k .. ARGV[4]; if holds(redis.call('get', s), ARGV[1]) then mine = s; break end end end; "
            + "if not mine then return 0 end; "
            + "redis.call('del', mine); "
            + slots("n", 3, 4)
            + "if redis.call('exists', unpack(slots)) == 0 then redis.call('del', KEYS[1]) end; "
            + "if redis.call('exists', KEYS[2]) == 1 then "
            + "local t = redis.call('time'); "
            + "redis.call('zremrangebyscore', KEYS[2], '-inf', '(' .. (t[1] * 1000 + math.floor(t[2] / 1000))); "
            + wakeFirstListening("KEYS[2]", "KEYS[3]") + "end; "
            + "return 1";

    /**
     * Lua: defines {@code checkPermit(slot, hash, owner, lease, permits)}, the renewal and confirmation of a permit,
     * as {@link #CHECK_LOCK}'s of a lock: if the {@code slot} key holds the owner's grant ({@link #HOLDS}), extends
     * it to {@code lease} ms, lets the semaphore's {@code hash} live at least as long (recording the number of
     * {@code permits} again if the hash was lost) and returns the slot key's PTTL; else -3.
     */
    private static final String CHECK_PERMIT = "local function checkPermit(slot, hash, owner, lease, permits) "
            + "if not holds(redis.call('get', slot), owner) then return -3 end; "
            + "redis.call('pexpire', slot, lease); "
            + "local ttl = redis.call('pttl', hash); "
            + "if ttl < tonumber(lease) then "
            + "if ttl == -2 then redis.call('hset', hash, 'permits', permits) end; "
            + "redis.call('pexpire', hash, lease) end; "
            + "return redis.call('pttl', slot) end; ";

    /** {@code checkPermit} of one permit. KEYS: the slot key, the semaphore's hash; ARGV: the owner, the lease in ms, the number of permits. */
    static final String PERMIT_CHECK = HOLDS + CHECK_PERMIT + "return checkPermit(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])";

    /**
     * Inspection of a semaphore's slots, read-only. KEYS: the semaphore's hash; ARGV: the number of permits
     * asked for, the head and the tail of the slot keys. If the hash records another number of permits while
     * a slot of that number is held, returns {-2, that number}, as {@link #PERMIT_GRANT} refuses. Else returns
     * {0} followed, for each held slot {@code k} below the number asked for, by {k, PTTL, the slot key's value}
     * (the grant {@link #PERMIT_GRANT} wrote, or the owner alone from an older Latchkey). It writes nothing,
     * so a semaphore nobody used stays without keys.
     */
    static final String PERMIT_INSPECT = "local n = tonumber(ARGV[1]); "
            + "local known = tonumber(redis.call('hget', KEYS[1], 'permits')); "
            + "if known and known ~= n then "
            + slots("known", 2, 3)
            + "if redis.call('exists', unpack(slots)) > 0 then return {-2, known} end end; "
            + "local held = {0}; "
            + "for k = 0, n - 1 do "
            + "local slot = ARGV[2] .. k .. ARGV[3]; "
            + "local ttl = redis.call('pttl', slot); "
            + "if ttl ~= -2 then local v = redis.call('get', slot); "
            + "if v then held[#held + 1] = k; held[#held + 1] = ttl; held[#held + 1] = v end end end; "
            + "return held";

    /**
     * The checks of many grants in one call ({@link RedisRenewals}): locks, permits and read-write grants alike, each
     * checked exactly as its own script checks it ({@link #CHECK}, {@link #PERMIT_CHECK}, {@link RedisReadWrite#CHECK}).
     * KEYS: the grants' keys in turn, all of one cluster hash slot: a lock's key; a permit's slot key and its
     * semaphore's hash; a read-write grant's readers and writer keys. ARGV: the lease in ms, then for each grant in
     * the order of KEYS its kind and its arguments: {@code l} and the owner field; {@code p}, the owner field and the
     * number of permits; {@code r} and the grant. Returns, in that order, what each grant's own script returns: its
     * remaining life in ms after the extension, or -3.
     */
    static final String CHECK_ALL = EFFECTS + CHECK_LOCK + HOLDS + CHECK_PERMIT + RedisReadWrite.CHECK_GRANT
            + "local ttls = {}; local k = 1; local a = 2; "
            + "while a <= #ARGV do local kind = ARGV[a]; "
            + "if kind == 'l' then ttls[#ttls + 1] = checkLock(KEYS[k], ARGV[a + 1], ARGV[1]); k = k + 1; a = a + 2 "
            + "elseif kind == 'p' then "
            + "ttls[#ttls + 1] = checkPermit(KEYS[k], KEYS[k + 1], ARGV[a + 1], ARGV[1], ARGV[a + 2]); k = k + 2; a = a + 3 "
            + "elseif kind == 'r' then "
            + "ttls[#ttls + 1] = checkReadWrite(KEYS[k], KEYS[k + 1], ARGV[a + 1], ARGV[1]); k = k + 2; a = a + 2 "
            + "else return redis.error_reply('no check of kind ' .. kind) end end; "
            + "return ttls";
}
