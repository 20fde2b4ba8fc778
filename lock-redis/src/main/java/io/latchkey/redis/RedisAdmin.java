package io.latchkey.redis;

import static io.latchkey.redis.RedisKeys.redissonChannel;
import static io.latchkey.redis.RedisKeys.waitersKey;
import static io.latchkey.redis.RedisKeys.wakeChannel;
import static io.latchkey.redis.RedisScripts.FORCE_RELEASE;
import static io.latchkey.redis.RedisScripts.INSPECT;
import static io.latchkey.redis.RedisScripts.IS_GRANT;

import io.latchkey.GrantTime;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.spi.GrantRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.redisson.api.AsyncIterator;
import org.redisson.api.RScript;
import org.redisson.api.options.KeysScanOptions;
import org.redisson.client.codec.LongCodec;
import org.redisson.client.codec.StringCodec;
import org.redisson.client.protocol.RedisCommands;

/**
 * An operator's reads and writes of a {@link RedisLockBackend}'s locks by name, whoever holds them: inspect,
 * force release and list.
 *
 * <p>Thread-safe and stateless beyond its backend.
 */
final class RedisAdmin {

    /** SCAN's COUNT: keys a node walks per round trip; a few milliseconds of its time, never more. */
    static final int SCAN_COUNT = 1000;

    private final RedisLockBackend backend;

    RedisAdmin(RedisLockBackend backend) {
        this.backend = backend;
    }

    /**
     * One read-only script on the lock's key and its waiter queue ({@link RedisScripts#INSPECT}), sent as a
     * plain EVAL to the master: the holder, token and since fields written with the grant, the key's PTTL as the
     * time Redis keeps it, and the queue's entries not yet stale at the server's time as the waiters. The
     * queue shares the lock key's hash slot ({@link RedisKeys#waitersKey}), so on a cluster too it is one script.
     *
     * <p>A read changes nothing, so one that finds no connection (a node that restarted, whose connection the
     * client has not made again yet) is sent again until it is answered or the timeout has passed since the
     * first: an inspect right after a restart reads the server rather than failing on the old connection.
     */
    Optional<GrantRecord> inspect(String lockName) {
        String key = backend.key(lockName);
        long until = System.nanoTime() + backend.timeout().toNanos();
        while (true) {
            try {
                List<Object> r = await(backend.redisson.getScript(StringCodec.INSTANCE).<List<Object>>evalAsync(key,
                        RScript.Mode.READ_WRITE, INSPECT, RScript.ReturnType.LIST, List.of(key, waitersKey(key)))
                        .toCompletableFuture(),
                        lockName, "while reading the holder of lock '" + lockName + "'");
                return grant(r);
            } catch (LockBackendUnavailableException e) {
                if (until - System.nanoTime() <= RETRY_PAUSE.toNanos()) {
                    throw e;
                }
                try {
                    Thread.sleep(RETRY_PAUSE.toMillis());
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** The pause before an inspect that found no connection is sent again. */
    private static final Duration RETRY_PAUSE = Duration.ofMillis(50);

    /**
     * One script on the lock's key ({@link RedisScripts#FORCE_RELEASE}) that reads the grant as
     * {@link #inspect} does, waiters included (those queued behind the grant it ends), and deletes the lock
     * key alone: the token counter stays, so the next token is higher, and the first live waiter is woken as
     * by a release. Sent once, never retried by Redisson: a retry after a reply lost on the way could end the
     * grant of the waiter the first run woke.
     */
    Optional<GrantRecord> forceRelease(String lockName) {
        String key = backend.key(lockName);
        List<Object> r = await(backend.commands().<List<Object>, List<Object>>evalWriteNoRetryAsync(key,
                StringCodec.INSTANCE, RedisCommands.EVAL_LIST, FORCE_RELEASE,
                List.of(key, waitersKey(key), wakeChannel(key), redissonChannel(key))).toCompletableFuture(),
                lockName, "while force-releasing lock '" + lockName + "' (whether it was ended is unknown: inspect it)");
        return grant(r);
    }

    /** {@link RedisScripts#INSPECT}'s answer, or {@link RedisScripts#FORCE_RELEASE}'s, as a grant record. */
    private static Optional<GrantRecord> grant(List<Object> r) {
        long ttl = ((Number) r.get(0)).longValue();
        if (ttl == -2) {
            return Optional.empty();
        }
        String token = (String) r.get(1);
        String holder = (String) r.get(2);
        int waiters = Math.toIntExact(((Number) r.get(3)).longValue());
        String since = (String) r.get(4);
        return Optional.of(new GrantRecord(holder.isEmpty() ? null : holder, token.isEmpty() ? -1 : Long.parseLong(token),
                ttl >= 0 ? Duration.ofMillis(ttl) : null, waiters, since.isEmpty() ? null
                        : new GrantTime(Instant.ofEpochMilli(Long.parseLong(since)), GrantTime.Source.BACKEND_AT_GRANT)));
    }

    /**
     * SCAN with MATCH over every primary (Redisson's key iteration walks each master of a cluster),
     * {@link #SCAN_COUNT} keys a round trip; on a cluster a second walk for the tagged keys of names with a
     * brace ({@link RedisKeys#lockKey}). A key is a lock's only if {@link RedisKeys#lockName} decodes it, so
     * semaphore, read-write and waiter keys (other prefixes) never count; the decoded names are sorted, and
     * from the first after {@code after} on, each is confirmed on its master by {@link RedisScripts#IS_GRANT},
     * a page at a time, until {@code limit} are held or none are left.
     */
    List<String> list(String prefix, String after, int limit) {
        String head = backend.prefix() + prefix;
        TreeSet<String> names = new TreeSet<>();
        collect(escape(head) + "*", prefix, after, names);
        if (backend.cluster()) {
            collect("{" + "?".repeat(RedisKeys.TAGGED_HEAD - 2) + "}" + escape(head) + "*", prefix, after, names);
        }
        List<String> held = new ArrayList<>();
        Iterator<String> next = names.iterator();
        while (held.size() < limit && next.hasNext()) {
            List<String> page = new ArrayList<>();
            List<CompletableFuture<Long>> answers = new ArrayList<>();
            while (page.size() < limit - held.size() && next.hasNext()) {
                String name = next.next();
                String key = backend.key(name);
                page.add(name);
                // READ_WRITE: on the master, where the grant is, as inspect reads it.
                answers.add(backend.redisson.getScript(LongCodec.INSTANCE).<Long>evalAsync(key, RScript.Mode.READ_WRITE,
                        IS_GRANT, RScript.ReturnType.LONG, List.of(key)).toCompletableFuture());
            }
            for (int i = 0; i < page.size(); i++) {
                if (await(answers.get(i), page.get(i), "while listing the held locks under '" + prefix + "'") == 1) {
                    held.add(page.get(i));
                }
            }
        }
        return held;
    }

    /** Adds the names under {@code prefix} after {@code after} of the keys that match {@code pattern}. */
    private void collect(String pattern, String prefix, String after, TreeSet<String> names) {
        AsyncIterator<String> keys = backend.redisson.getKeys()
                .getKeysAsync(KeysScanOptions.defaults().pattern(pattern).chunkSize(SCAN_COUNT));
        String what = "while scanning the keys that match '" + pattern + "' to list the held locks under '" + prefix + "'";
        while (await(keys.hasNext(), null, what)) {
            String name = RedisKeys.lockName(backend.prefix(), await(keys.next(), null, what), backend.cluster());
            if (name != null && name.startsWith(prefix) && (after == null || name.compareTo(after) > 0)) {
                names.add(name);
            }
        }
    }

    /** {@code text} as a SCAN MATCH pattern that matches it alone: Redis's glob characters escaped. */
    static String escape(String text) {
        StringBuilder b = new StringBuilder(text.length() + 8);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
                b.append('\\');
            }
            b.append(c);
        }
        return b.toString();
    }

    private <T> T await(CompletionStage<T> f, String lockName, String what) {
        String subject = lockName == null ? "the held locks" : "lock '" + lockName + "'";
        String where = lockName == null ? "redis keys '" + backend.prefix() + "*' on " + backend.server()
                : backend.where(lockName);
        return backend.await(f.toCompletableFuture(), lockName, subject, where, what);
    }
}
