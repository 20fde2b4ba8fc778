package io.latchkey.kafka;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Maps lock names to legal Kafka topic names, deterministically and without collisions.
 *
 * <p>Kafka allows only {@code [a-zA-Z0-9._-]} and at most 249 characters, and refuses a topic whose
 * name equals an existing one once {@code .} and {@code _} are treated alike. Letters, digits and
 * {@code -} are kept; every other character becomes {@code _} and the two hex digits of each of its
 * UTF-8 bytes ({@code job:nightly} is {@code job_3Anightly}), so the mapped part never holds a
 * {@code .} and the escape is reversible. A result longer than the limit is cut and ends with
 * {@code _Z} and the SHA-256 of the name, a form no short result takes. Thread-safe.
 */
final class TopicNames {

    static final int MAX_TOPIC_LENGTH = 249;
    private static final int HASH_SUFFIX_LENGTH = 2 + 64;

    private TopicNames() {
    }

    /**
     * Checks a topic prefix: legal topic characters, and short enough to leave room for the name.
     *
     * @throws IllegalArgumentException naming the rule
     */
    static String validatePrefix(String prefix) {
        if (prefix.isEmpty() || prefix.length() > 100 || !prefix.matches("[a-zA-Z0-9._-]+")) {
            throw new IllegalArgumentException("topic prefix '" + prefix + "' is not allowed: write 1 to 100 of the"
                    + " characters a-z, A-Z, 0-9, '.', '_' and '-'");
        }
        return prefix;
    }

    /** The topic (and consumer group id) of {@code lockName} under {@code prefix}. */
    static String topic(String prefix, String lockName) {
        return map(prefix, lockName);
    }

    /**
     * The topic of semaphore {@code name} under {@code prefix}: the prefix, {@code _s}, then the name
     * mapped as a lock name is. No lock topic takes that form, as {@code _} in a mapped lock name is
     * always followed by two hex digits (or {@code Z} where a long name is cut, past the first 83
     * characters); nor the token topic {@code <prefix>_tokens}.
     */
    static String semaphoreTopic(String prefix, String name) {
        return map(prefix + "_s", name);
    }

    /**
     * The consumer group id of slot {@code slot} of the semaphore whose topic is {@code semaphoreTopic}:
     * the topic, {@code _k} and the slot's number. No topic takes that form ({@code _k} is no escape),
     * so it is no lock's group and no other semaphore's. Group ids have no length limit of their own.
     */
    static String slotGroup(String semaphoreTopic, int slot) {
        return semaphoreTopic + "_k" + slot;
    }

    /**
     * The lock name whose topic (and group id) under {@code prefix} is {@code topic}: the inverse of
     * {@link #topic}, for listing the held locks. {@code null} if no lock name maps to it: another
     * prefix's, a semaphore's topic or slot group, the token topic, a name cut to its hash (see
     * {@link #isCut}), or a group of another application under the prefix.
     */
    static String lockName(String prefix, String topic) {
        if (!topic.startsWith(prefix) || topic.length() == prefix.length() || isCut(prefix, topic)) {
            return null;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(topic.length());
        for (int i = prefix.length(); i < topic.length(); i++) {
            char c = topic.charAt(i);
            if (c == '_') {
                int hi = i + 2 < topic.length() ? hexDigit(topic.charAt(i + 1)) : -1;
                int lo = hi < 0 ? -1 : hexDigit(topic.charAt(i + 2));
                if (lo < 0) {
                    return null; // _s (a semaphore), _t (the token topic), _k (a slot group): no escape
                }
                bytes.write(hi << 4 | lo);
                i += 2;
            } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-') {
                bytes.write(c);
            } else {
                return null;
            }
        }
        String name;
        try {
            name = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
        // only the one form map() writes: an escaped letter or a lone surrogate is no lock's topic
        return map(prefix, name).equals(topic) ? name : null;
    }

    /**
     * Whether {@code topic} is the form {@link #topic} gives a name too long to keep under {@code prefix}:
     * cut, {@code _Z} and the name's SHA-256. The name itself cannot be read back from it.
     */
    static boolean isCut(String prefix, String topic) {
        int at = MAX_TOPIC_LENGTH - HASH_SUFFIX_LENGTH;
        if (topic.length() != MAX_TOPIC_LENGTH || !topic.startsWith(prefix) || topic.startsWith(prefix + "_s")
                || !topic.startsWith("_Z", at)) {
            return false;
        }
        for (int i = at + 2; i < topic.length(); i++) {
            char c = topic.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return false;
            }
        }
        return true;
    }

    /** The value of an upper-case hex digit as {@link #map} writes it, else -1. */
    private static int hexDigit(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    }

    private static String map(String prefix, String lockName) {
        StringBuilder b = new StringBuilder(prefix.length() + lockName.length() * 3);
        b.append(prefix);
        for (byte raw : lockName.getBytes(StandardCharsets.UTF_8)) {
            int c = raw & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-') {
                b.append((char) c);
            } else {
                b.append('_').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        if (b.length() <= MAX_TOPIC_LENGTH) {
            return b.toString();
        }
        int keep = MAX_TOPIC_LENGTH - HASH_SUFFIX_LENGTH;
        return b.substring(0, keep) + "_Z" + sha256(lockName);
    }

    private static String sha256(String s) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            StringBuilder hex = new StringBuilder(64);
            for (byte x : d) {
                hex.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
            }
            return hex.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
