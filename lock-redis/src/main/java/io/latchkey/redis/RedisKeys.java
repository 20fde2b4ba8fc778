package io.latchkey.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Redis keys of a lock and of a semaphore, so that on a Redis Cluster every key of one lock, or of one
 * semaphore, lives in one hash slot.
 *
 * <p>A lock's scripts name several keys at once (the lock key, the token counter
 * {@code redisson_lock_token:{<lock key>}}, the release channel, the slot record
 * {@code latchkey_slot:{<lock key>}}), and a cluster runs a script only if all its keys hash to one
 * slot. Redisson wraps the lock key in braces, a hash tag, so the other keys hash like the lock key
 * itself, unless the lock key holds a brace of its own: then Redisson appends it without braces and
 * the tag is whatever the key's first {@code {...}} holds, and a key such as {@code latchkey:a}b} or
 * {@code latchkey:a{} hashes apart from its counter. So on a cluster a lock key that holds a brace gets
 * a hash tag of its own in front: {@code {<16 hex digits of the key's SHA-256>}<namespace>:<name>},
 * and the keys derived from it take no braces of their own. Keys without braces, and every key
 * outside a cluster, are {@code <namespace>:<name>} as always. The mapping is deterministic and
 * without collisions: a tagged key holds the whole untagged key after a tag of fixed length, and an
 * untagged one holds no brace.
 *
 * <p>A semaphore's keys ({@link #semaphoreTag}) begin with {@code latchkey_semaphore}, and a read-write
 * lock's, under the same kind of tag, with {@code latchkey_rw}, never with the
 * {@code <namespace>:} that begins every lock key (lock names are taken as they are, so every key after
 * that prefix is some lock's), nor with the {@code {} of a tagged lock key, nor with the prefixes of the
 * keys beside a lock ({@code redisson_lock_token}, {@code latchkey_waiters}, {@code latchkey_wake},
 * {@code redisson_lock__channel}, {@code latchkey_slot}): a semaphore, a read-write lock and a lock of
 * one name share no key. Each kind of semaphore key has a prefix of its own followed by the decodable tag, so no two
 * names or kinds share a key either. (As for the keys beside a lock, a namespace that itself begins
 * with one of these prefixes is the application's to avoid.)
 *
 * <p>The keys and channels beside a lock key follow Redisson's rule for the keys of its locks,
 * {@code prefix:{key}}, or {@code prefix:key} when the key holds braces of its own
 * ({@link #beside}); the token counter and Redisson's lock channel are the very names Redisson's
 * {@code RFencedLock} used.
 *
 * <p>Stateless and thread-safe.
 */
final class RedisKeys {

    private RedisKeys() {
    }

    /** The lock key of {@code lockName} under {@code prefix} (the namespace and its colon). */
    static String lockKey(String prefix, String lockName, boolean cluster) {
        String key = prefix + lockName;
        if (!cluster || (key.indexOf('{') < 0 && key.indexOf('}') < 0)) {
            return key;
        }
        return "{" + tag(key) + "}" + key;
    }

    /**
     * The lock name whose key under {@code prefix} is {@code key} ({@link #lockKey} undone), or null if
     * {@code key} is no lock key of that prefix: one that does not begin with the prefix (after a tag on a
     * cluster), or whose name would have been given another form (a tag where none belongs, or none where
     * one does). So a key that {@code lockKey} never writes is never taken for a lock.
     */
    static String lockName(String prefix, String key, boolean cluster) {
        String untagged = cluster && key.length() >= TAGGED_HEAD && key.charAt(0) == '{' && key.charAt(TAGGED_HEAD - 1) == '}'
                ? key.substring(TAGGED_HEAD) : key;
        if (!untagged.startsWith(prefix)) {
            return null;
        }
        String name = untagged.substring(prefix.length());
        return lockKey(prefix, name, cluster).equals(key) ? name : null;
    }

    /** The length of a lock key's hash tag on a cluster: a brace, 16 hex digits, a brace. */
    static final int TAGGED_HEAD = 18;

    /** The key of a lock's last completed slot, in the lock key's hash slot. */
    static String slotKey(String lockKey, boolean cluster) {
        return cluster && lockKey.startsWith("{") ? "latchkey_slot:" + lockKey : "latchkey_slot:{" + lockKey + "}";
    }

    /**
     * The hash tag that puts every key of semaphore {@code name} under {@code prefix} into one cluster
     * hash slot, on a single server as on a cluster: {@code {<prefix><name>}}, or, when that holds a
     * brace, {@code {<16 hex digits of its SHA-256>}<prefix><name>}. Decodable, so without collisions:
     * the first form holds exactly one brace of each kind, the second more, after a tag of fixed length.
     */
    static String semaphoreTag(String prefix, String name) {
        String base = prefix + name;
        return base.indexOf('{') < 0 && base.indexOf('}') < 0 ? "{" + base + "}" : "{" + tag(base) + "}" + base;
    }

    /** The hash of a semaphore that holds its number of permits: {@code latchkey_semaphore:<tag>}. */
    static String semaphoreKey(String tag) {
        return "latchkey_semaphore:" + tag;
    }

    /** What a slot key holds before its number: slot {@code k} is {@code latchkey_semaphore_slot:<k>:<tag>}. */
    static final String PERMIT_KEY_HEAD = "latchkey_semaphore_slot:";

    /** What a slot key holds after its number. */
    static String permitKeyTail(String tag) {
        return ":" + tag;
    }

    /** The key of slot {@code k} of a semaphore, holding its holder's owner id with the lease as its time to live. */
    static String permitKey(String tag, int slot) {
        return PERMIT_KEY_HEAD + slot + permitKeyTail(tag);
    }

    /** A semaphore's token counter, one per name for all its slots; it never expires. */
    static String semaphoreTokenKey(String tag) {
        return "latchkey_semaphore_token:" + tag;
    }

    /** The sorted set of a semaphore's waiters, as a lock's. */
    static String semaphoreWaitersKey(String tag) {
        return "latchkey_semaphore_waiters:" + tag;
    }

    /** A read-write lock's sorted set of readers: each reader's grant, scored by its expiry in server milliseconds. */
    static String readersKey(String tag) {
        return "latchkey_rw_readers:" + tag;
    }

    /** A read-write lock's writer key: the writer's grant, with the lease as its time to live. */
    static String writerKey(String tag) {
        return "latchkey_rw_writer:" + tag;
    }

    /** A read-write lock's token counter, one sequence for both modes; it never expires. */
    static String readWriteTokenKey(String tag) {
        return "latchkey_rw_token:" + tag;
    }

    /** The sorted set of a read-write lock's waiters, readers and writers, as a lock's. */
    static String readWriteWaitersKey(String tag) {
        return "latchkey_rw_waiters:" + tag;
    }

    /** The channel on which a release of a read-write lock names the waiters it wakes. */
    static String readWriteWakeChannel(String tag) {
        return "latchkey_rw_wake:" + tag;
    }

    /**
     * A wake channel under the lock's, semaphore's or read-write lock's {@code channel}: the channel, a colon
     * and {@code suffix}, so that it keeps their hash tag.
     */
    static String wakeChannel(String channel, String suffix) {
        return channel + ":" + suffix;
    }

    /**
     * The channel on which a client's waiters under {@code channel} listen, {@code owner} the owner field of
     * one of them: the field up to its last colon, that is the client's id (after a read-write lock's mode),
     * as {@link RedisScripts#WAKE} names it.
     */
    static String clientWakeChannel(String channel, String owner) {
        return wakeChannel(channel, owner.substring(0, owner.lastIndexOf(':')));
    }

    /** The channel on which a release of a permit names the one waiter it wakes. */
    static String semaphoreWakeChannel(String tag) {
        return "latchkey_semaphore_wake:" + tag;
    }

    /**
     * A key beside {@code key} in its cluster hash slot, named as Redisson names the keys of its locks
     * ({@code prefix:{key}}, or {@code prefix:key} when the key has braces of its own), so that the token
     * counter and the lock channel are the very ones an older Latchkey on Redisson's RFencedLock used.
     */
    static String beside(String prefix, String key) {
        return key.contains("{") ? prefix + ":" + key : prefix + ":{" + key + "}";
    }

    /** Redisson's fencing counter of the lock key: kept, so tokens go on rising across versions. */
    static String tokenKey(String key) {
        return beside("redisson_lock_token", key);
    }

    /** The sorted set of waiters, scored by when each entry goes stale (server time, ms). */
    static String waitersKey(String key) {
        return beside("latchkey_waiters", key);
    }

    /** The channel on which a release names the one waiter it wakes. */
    static String wakeChannel(String key) {
        return beside("latchkey_wake", key);
    }

    /** Redisson's lock channel, on which its RLock and RFencedLock waiters listen for the unlock message. */
    static String redissonChannel(String key) {
        return beside("redisson_lock__channel", key);
    }

    private static String tag(String key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
