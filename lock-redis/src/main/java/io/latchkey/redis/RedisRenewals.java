package io.latchkey.redis;

import static io.latchkey.redis.RedisScripts.CHECK_ALL;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.redisson.api.RScript;
import org.redisson.client.RedisTryAgainException;
import org.redisson.client.codec.LongCodec;

/**
 * The ownership checks of every lock a backend holds, sent together: one script per Redis Cluster hash slot (per
 * server outside a cluster) for all the locks due, instead of one per lock, so outside a cluster a client holding up
 * to {@value #MAX_KEYS} locks sends about as many scripts as one holding a single lock.
 *
 * <p>Each lock is due a check period after its last check (its grant, at first). A round sends every lock due
 * within half a period, and the next round comes when the first lock left is due: so no lock waits longer than a
 * period between two checks, as when each lock had its own timer, and rounds are more than half a period apart, at
 * most two per period however many locks are held. A lock held alone is checked exactly a period after its grant,
 * never earlier.
 *
 * <p>Why a batch keeps rule 7. {@link RedisScripts#CHECK_ALL} does for each key what {@link RedisScripts#CHECK}
 * does for one, and a script is atomic: each key's answer is its {@code PTTL} right after its own extension, read on
 * the server after the moment taken before the script was sent, so that moment starts each lock's deadline as it
 * did for a script of its own. A key that no longer holds its owner is -3 for that lock alone: the others of the
 * batch are confirmed. A failed batch is silence for each of its locks, never loss. The keys of one script are of
 * one hash slot, which a cluster requires and which is one node; outside a cluster every key is on the one
 * primary. A script renews at most {@link #MAX_KEYS} keys (three commands each), so none keeps Redis from other
 * clients for long. A slot where a single lock is held gets
 * that lock's own {@link RedisScripts#CHECK}. A batch a cluster refuses while its slot migrates ({@code TRYAGAIN}:
 * some of its keys moved, some not yet) is sent again key by key, each following {@code ASK} as a single key does.
 *
 * <p>The guards of a single lock's check hold per lock ({@link RedisRenewed#beginCheck}): a lock whose previous
 * check has not come back is not sent again, and a lock released meanwhile is not reported.
 *
 * <p>Thread-safe: locks join and leave on their holders' threads, rounds run on the backend's checker thread; the
 * set of locks and the next round are guarded by this object's monitor.
 */
final class RedisRenewals {

    /** The most keys one script checks. */
    static final int MAX_KEYS = 500;

    private final RedisLockBackend backend;
    private final ScheduledExecutorService checker;
    private final long periodNanos;
    private final Set<RedisLease> held = new HashSet<>();
    private ScheduledFuture<?> next;
    private long nextAt;

    RedisRenewals(RedisLockBackend backend, ScheduledExecutorService checker, long periodNanos) {
        this.backend = backend;
        this.checker = checker;
        this.periodNanos = periodNanos;
    }

    synchronized void add(RedisLease lease) {
        lease.due = System.nanoTime() + periodNanos;
        held.add(lease);
        if (next == null || lease.due - nextAt < 0) {
            schedule(lease.due);
        }
    }

    synchronized void remove(RedisLease lease) {
        if (held.remove(lease) && held.isEmpty() && next != null) {
            next.cancel(false);
            next = null;
        }
    }

    private void schedule(long at) {
        if (next != null) {
            next.cancel(false);
        }
        nextAt = at;
        try {
            next = checker.schedule(this::round, Math.max(0, at - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            next = null; // the backend is closing: its leases end with it
        }
    }

    private void round() {
        long now = System.nanoTime();
        Map<Integer, List<RedisLease>> bySlot = new TreeMap<>();
        synchronized (this) {
            next = null;
            long first = 0;
            boolean any = false;
            for (RedisLease lease : held) {
                if (lease.due - now <= periodNanos / 2) {
                    // Due now or before the next round could come: checked now; one still in flight counts as silence.
                    lease.due = now + periodNanos;
                    if (lease.beginCheck()) {
                        int slot = backend.hashSlot(lease.key());
                        bySlot.computeIfAbsent(slot, s -> new ArrayList<>()).add(lease);
                    }
                }
                if (!any || lease.due - first < 0) {
                    first = lease.due;
                    any = true;
                }
            }
            if (any) {
                schedule(first);
            }
        }
        for (List<RedisLease> slot : bySlot.values()) {
            for (int from = 0; from < slot.size(); from += MAX_KEYS) {
                send(slot.subList(from, Math.min(slot.size(), from + MAX_KEYS)));
            }
        }
    }

    private void send(List<RedisLease> batch) {
        if (batch.size() == 1) {
            alone(batch.get(0));
            return;
        }
        List<Object> keys = new ArrayList<>(batch.size());
        Object[] args = new Object[batch.size() + 1];
        args[0] = backend.leaseMillis;
        for (int i = 0; i < batch.size(); i++) {
            keys.add(batch.get(i).key());
            args[i + 1] = backend.field(batch.get(i).owner);
        }
        long sentAt = System.nanoTime();
        CompletableFuture<List<Object>> reply;
        try {
            reply = backend.redisson.getScript(LongCodec.INSTANCE).<List<Object>>evalAsync((String) keys.get(0),
                    RScript.Mode.READ_WRITE, CHECK_ALL, RScript.ReturnType.LIST, keys, args).toCompletableFuture();
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenComplete((ttls, e) -> {
            if (e == null && (ttls == null || ttls.size() != batch.size())) {
                e = new IllegalStateException("the check of " + batch.size() + " locks answered " + ttls);
            }
            if (e != null && backend.cluster() && tryAgain(e)) {
                RedisRenewed.log.debug("the check of {} locks in one hash slot was refused while the slot migrates;"
                        + " checking each alone: {}", batch.size(), e.toString());
                batch.forEach(this::alone);
                return;
            }
            for (int i = 0; i < batch.size(); i++) {
                batch.get(i).answered(sentAt, e == null ? ((Number) ttls.get(i)).longValue() : null, e);
            }
        });
    }

    /** {@link RedisScripts#CHECK} of one lock whose check has begun. */
    private void alone(RedisLease lease) {
        long sentAt = System.nanoTime();
        CompletableFuture<Long> reply;
        try {
            reply = lease.renew();
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenComplete((ttl, e) -> lease.answered(sentAt, ttl, e));
    }

    private static boolean tryAgain(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof RedisTryAgainException) {
                return true;
            }
        }
        return false;
    }
}
