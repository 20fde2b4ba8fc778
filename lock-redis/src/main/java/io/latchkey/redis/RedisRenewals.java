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
 * The ownership checks of every grant a backend holds, locks, permits and read-write grants alike, sent together: one
 * script per Redis Cluster hash slot (per server outside a cluster) for all the grants due, instead of one per grant,
 * so outside a cluster a client holding up to {@value #MAX_GRANTS} grants sends about as many scripts as one holding a
 * single lock.
 *
 * <p>Each grant is due a check period after its last check (its grant, at first). A round sends every grant due
 * within half a period, and the next round comes when the first grant left is due: so no grant waits longer than a
 * period between two checks, as when each had its own timer, and rounds are more than half a period apart, at most
 * two per period however many grants are held. A grant held alone is checked exactly a period after it was granted,
 * never earlier.
 *
 * <p>Why a batch keeps rule 7. {@link RedisScripts#CHECK_ALL} does for each grant what that grant's own script does
 * ({@link RedisScripts#CHECK}, {@link RedisScripts#PERMIT_CHECK}, {@link RedisReadWrite#CHECK}: the same Lua
 * function), and a script is atomic: each grant's answer is its remaining life right after its own extension, read on
 * the server after the moment taken before the script was sent, so that moment starts each grant's deadline as it
 * did for a script of its own. A grant whose keys no longer hold its owner is -3 for that grant alone: the others of
 * the batch are confirmed. A failed batch is silence for each of its grants, never loss. The keys of one script are of
 * one hash slot, which a cluster requires and which is one node (a grant's keys share a hash tag, and a batch is
 * grouped by the slot of each grant's {@link RedisRenewed#routingKey}); outside a cluster every key is on the one
 * primary. A script checks at most {@link #MAX_GRANTS} grants (three to six commands each), so none keeps Redis from
 * other clients for long. A slot where a single grant is held gets that grant's own script. A batch a cluster refuses
 * while its slot migrates ({@code TRYAGAIN}: some of its keys moved, some not yet) is sent again grant by grant, each
 * following {@code ASK} as a single grant's script does.
 *
 * <p>The guards of a single grant's check hold per grant ({@link RedisRenewed#beginCheck}): a grant whose previous
 * check has not come back is not sent again, and a grant released meanwhile is not reported.
 *
 * <p>Thread-safe: grants join and leave on their holders' threads, rounds run on the backend's checker thread; the
 * set of grants and the next round are guarded by this object's monitor.
 */
final class RedisRenewals {

    /** The most grants one script checks. */
    static final int MAX_GRANTS = 500;

    private final RedisLockBackend backend;
    private final ScheduledExecutorService checker;
    private final long periodNanos;
    private final Set<RedisRenewed> held = new HashSet<>();
    private ScheduledFuture<?> next;
    private long nextAt;

    RedisRenewals(RedisLockBackend backend, ScheduledExecutorService checker, long periodNanos) {
        this.backend = backend;
        this.checker = checker;
        this.periodNanos = periodNanos;
    }

    synchronized void add(RedisRenewed lease) {
        lease.due = System.nanoTime() + periodNanos;
        held.add(lease);
        if (next == null || lease.due - nextAt < 0) {
            schedule(lease.due);
        }
    }

    synchronized void remove(RedisRenewed lease) {
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
        Map<Integer, List<RedisRenewed>> bySlot = new TreeMap<>();
        synchronized (this) {
            next = null;
            long first = 0;
            boolean any = false;
            for (RedisRenewed lease : held) {
                if (lease.due - now <= periodNanos / 2) {
                    // Due now or before the next round could come: checked now; one still in flight counts as silence.
                    lease.due = now + periodNanos;
                    if (lease.beginCheck()) {
                        int slot = backend.hashSlot(lease.routingKey());
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
        for (List<RedisRenewed> slot : bySlot.values()) {
            for (int from = 0; from < slot.size(); from += MAX_GRANTS) {
                send(slot.subList(from, Math.min(slot.size(), from + MAX_GRANTS)));
            }
        }
    }

    private void send(List<RedisRenewed> batch) {
        if (batch.size() == 1) {
            alone(batch.get(0));
            return;
        }
        List<Object> keys = new ArrayList<>(2 * batch.size());
        List<Object> args = new ArrayList<>(1 + 3 * batch.size());
        args.add(backend.leaseMillis);
        for (RedisRenewed grant : batch) {
            grant.addCheck(keys, args);
        }
        long sentAt = System.nanoTime();
        CompletableFuture<List<Object>> reply;
        try {
            reply = backend.redisson.getScript(LongCodec.INSTANCE).<List<Object>>evalAsync((String) keys.get(0),
                    RScript.Mode.READ_WRITE, CHECK_ALL, RScript.ReturnType.LIST, keys, args.toArray()).toCompletableFuture();
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        reply.whenComplete((ttls, e) -> {
            if (e == null && (ttls == null || ttls.size() != batch.size())) {
                e = new IllegalStateException("the check of " + batch.size() + " grants answered " + ttls);
            }
            if (e != null && backend.cluster() && tryAgain(e)) {
                RedisRenewed.log.debug("the check of {} grants in one hash slot was refused while the slot migrates;"
                        + " checking each alone: {}", batch.size(), e.toString());
                batch.forEach(this::alone);
                return;
            }
            for (int i = 0; i < batch.size(); i++) {
                batch.get(i).answered(sentAt, e == null ? ((Number) ttls.get(i)).longValue() : null, e);
            }
        });
    }

    /** The own script of one grant whose check has begun. */
    private void alone(RedisRenewed lease) {
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
