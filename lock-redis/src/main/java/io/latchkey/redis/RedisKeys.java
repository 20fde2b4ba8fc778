package io.latchkey.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Redis keys of a lock, so that on a Redis Cluster every key of one lock lives in one hash slot.
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

    /** The key of a lock's last completed slot, in the lock key's hash slot. */
    static String slotKey(String lockKey, boolean cluster) {
        return cluster && lockKey.startsWith("{") ? "latchkey_slot:" + lockKey : "latchkey_slot:{" + lockKey + "}";
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
