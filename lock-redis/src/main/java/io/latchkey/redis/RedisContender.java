package io.latchkey.redis;

import static io.latchkey.redis.RedisErrors.didNotAnswer;
import static io.latchkey.redis.RedisErrors.orPaused;
import static io.latchkey.redis.RedisErrors.translate;

import io.latchkey.spi.Deadline;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.redisson.api.RFuture;
import org.redisson.api.RTopic;
import org.redisson.api.RedissonClient;
import org.redisson.api.listener.BaseStatusListener;
import org.redisson.client.codec.StringCodec;

/**
 * The acquire loop that locks and semaphores share: grant attempts, each bounded and undone when given up,
 * the waiter queue beside the lock or semaphore, and the wake-ups a release sends on its wake channel.
 * What is contended for, and how an attempt is sent and undone, is a {@link Contention} of the backend's.
 *
 * <p>Thread-safe: it holds the client and the timeout only; an acquire's queue entry and subscription are its own.
 */
final class RedisContender {

    private final RedissonClient redisson;
    private final Duration timeout;

    RedisContender(RedissonClient redisson, Duration timeout) {
        this.redisson = redisson;
        this.timeout = timeout;
    }

    /**
     * What an acquire contends for: a lock's key or a semaphore's slots, with the waiter queue and wake
     * channel beside them, and how one attempt is sent and undone.
     */
    abstract static class Contention {
        final String subject;
        final String name;
        final String where;
        final String waitersKey;
        final String wakeChannel;

        Contention(String subject, String name, String where, String waitersKey, String wakeChannel) {
            this.subject = subject;
            this.name = name;
            this.where = where;
            this.waitersKey = waitersKey;
            this.wakeChannel = wakeChannel;
        }

        /** One grant script: {token, PTTL, ...} when granted, {-1, PTTL of the holder to wait for, ...} when not. */
        abstract RFuture<List<Long>> send(String field, long queueFor);

        /** Makes sure an attempt whose answer we do not have holds nothing for {@code field}. */
        abstract void undo(String field);

        /**
         * Sends, without waiting, what takes {@code field} out of the waiter queue when its acquire stops
         * waiting on an error or an interrupt, if this kind does more than remove the entry; false (the
         * default) if the plain removal will do.
         */
        boolean leave(String field) {
            return false;
        }

        /** The error for an answer that refuses the request outright (not "held"), or {@code null}. */
        RuntimeException refusal(List<Long> reply) {
            return null;
        }
    }

    /** The answer of the attempt that was granted, and when it was sent. */
    record Granted(long sentAt, List<Long> reply) {
    }

    /**
     * Attempts until granted or the wait is over: queued by the first attempt already if there is a
     * wait, then subscribed to the wake channel, then woken by a release naming this owner, else at the
     * holder's expiry or at the end of the wait. {@code null} if not granted.
     */
    Granted contend(Contention c, String field, Deadline deadline) throws InterruptedException {
        Deadline end = deadline.callBound(timeout);
        Waiter waiter = null;
        try {
            // Queued by the first attempt already if there is a wait: a release between that attempt and the
            // subscription is caught by the attempt that follows the subscription.
            long queueFor = deadline.hasPassed() ? -1 : Math.max(1, deadline.remainingMillis());
            while (true) {
                if (waiter != null) {
                    waiter.wake.drainPermits(); // a wake-up from now on is news for the attempt below or a later one
                }
                long sentAt = System.nanoTime();
                List<Long> r = attempt(c, field, queueFor, end);
                RuntimeException refused = c.refusal(r);
                if (refused != null) {
                    throw refused;
                }
                long token = r.get(0);
                long ttl = r.get(1);
                if (token >= 0) {
                    return new Granted(sentAt, r);
                }
                if (queueFor <= 0) {
                    return null; // not queued (no wait), or left the queue (the wait is over)
                }
                if (waiter == null) {
                    waiter = subscribe(c, field, end);
                } else {
                    // woken by a release naming this owner, else at the holder key's expiry or the end of the wait
                    long sleep = deadline.remainingMillis();
                    if (ttl >= 0) {
                        sleep = Math.min(sleep, Math.max(1, ttl));
                    }
                    waiter.wake.tryAcquire(sleep, TimeUnit.MILLISECONDS);
                }
                queueFor = deadline.hasPassed() ? 0 : Math.max(1, deadline.remainingMillis());
            }
        } catch (InterruptedException | RuntimeException e) {
            leaveQueue(c, field);
            throw e;
        } finally {
            if (waiter != null) {
                waiter.close();
            }
        }
    }

    /** One grant script, bounded by {@link #bound}; never leaves anything held when given up. */
    private List<Long> attempt(Contention c, String field, long queueFor, Deadline end) throws InterruptedException {
        long sentAt = System.nanoTime();
        long bound = bound(end);
        RFuture<List<Long>> pending = c.send(field, queueFor);
        String action = "while acquiring " + c.subject;
        try {
            return pending.toCompletableFuture().get(bound, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            abandon(c, field);
            throw e;
        } catch (TimeoutException e) {
            abandon(c, field);
            throw orPaused(didNotAnswer(c.name, c.where, action + " (within the wait plus the timeout)", timeout,
                    e), c.name, c.subject, c.where, action, sentAt, bound);
        } catch (ExecutionException e) {
            // An attempt that failed after its script ran (no replica acknowledged it, or the answer was lost) may have left the key.
            abandon(c, field);
            throw orPaused(translate(c.name, c.where, action, timeout, e), c.name, c.subject, c.where, action,
                    sentAt, bound);
        }
    }

    /**
     * A round trip's bound: the timeout, within the caller's end, but at least a quarter of the timeout,
     * so that a call made at the very end of the wait, or after this process was paused, still gets its answer.
     */
    private long bound(Deadline end) {
        return Math.max(Math.min(end.remainingNanos(), timeout.toNanos()), timeout.toNanos() / 4);
    }

    /** Makes sure an attempt we stop waiting for never leaves anything held or this owner queued. */
    private void abandon(Contention c, String field) {
        c.undo(field);
        leaveQueue(c, field);
    }

    /** Best effort: an entry left behind goes stale on its own within the wait it announced plus a timeout. */
    private void leaveQueue(Contention c, String field) {
        if (!c.leave(field)) {
            redisson.getScoredSortedSet(c.waitersKey, StringCodec.INSTANCE).removeAsync(field);
        }
    }

    /**
     * Listens on this owner's own wake channel ({@link RedisKeys#wakeChannel(String, String)}). Redisson
     * subscribes its channels again after it reconnects (a restart of the server), so a waiter stays
     * reachable across a restart.
     *
     * <p>A channel per waiter, not one per lock with the owner in the message, because a release must know
     * whether the waiter it names still listens: an entry can outlive its waiter in the queue (a waiter
     * whose attempt failed while the server was unreachable could not leave it), and a release that woke
     * such an entry woke nobody, leaving the live waiters to their own timers. {@code PUBLISH} answers how
     * many clients received the message, so the release scripts go down the queue to the first waiter
     * that hears it and drop the entries nobody listens to.
     */
    private Waiter subscribe(Contention c, String field, Deadline end) throws InterruptedException {
        long sentAt = System.nanoTime();
        long bound = bound(end);
        Waiter waiter = new Waiter(redisson.getTopic(RedisKeys.wakeChannel(c.wakeChannel, field), StringCodec.INSTANCE));
        RFuture<Integer> f = waiter.topic.addListenerAsync(String.class, (channel, message) -> waiter.wake.release());
        // After a reconnect Redisson subscribes again, but a release published before that is not heard:
        // the waiter tries once more when the channel is subscribed again, as it did after its first subscription.
        waiter.topic.addListenerAsync(new BaseStatusListener() {
            @Override
            public void onSubscribe(String channel) {
                waiter.wake.release();
            }
        }).thenAccept(waiter::statusListener);
        String action = "while subscribing to the wake-ups of " + c.subject;
        try {
            waiter.listener = f.toCompletableFuture().get(bound, TimeUnit.NANOSECONDS);
            return waiter;
        } catch (TimeoutException e) {
            f.thenAccept(id -> waiter.topic.removeListenerAsync(id));
            waiter.close();
            throw orPaused(didNotAnswer(c.name, c.where, action, timeout, e), c.name, c.subject, c.where,
                    action, sentAt, bound);
        } catch (ExecutionException e) {
            waiter.close();
            throw orPaused(translate(c.name, c.where, action, timeout, e), c.name, c.subject, c.where, action,
                    sentAt, bound);
        } catch (InterruptedException e) {
            f.thenAccept(id -> waiter.topic.removeListenerAsync(id));
            waiter.close();
            throw e;
        }
    }

    /**
     * A waiting acquire's subscription: one permit per release that named its owner, and one each time
     * the channel is subscribed again after a reconnect.
     */
    private static final class Waiter {
        final RTopic topic;
        final Semaphore wake = new Semaphore(0);
        volatile Integer listener;
        private Integer status; // guarded by this
        private boolean closed; // guarded by this

        Waiter(RTopic topic) {
            this.topic = topic;
        }

        synchronized void statusListener(Integer id) {
            if (closed) {
                topic.removeListenerAsync(id);
            } else {
                status = id;
            }
        }

        void close() {
            Integer id = listener;
            if (id != null) {
                topic.removeListenerAsync(id); // Redisson unsubscribes when the channel's last listener goes
            }
            synchronized (this) {
                closed = true;
                if (status != null) {
                    topic.removeListenerAsync(status);
                }
            }
        }
    }
}
