package io.latchkey.redis;

import static io.latchkey.redis.RedisErrors.didNotAnswer;
import static io.latchkey.redis.RedisErrors.orPaused;
import static io.latchkey.redis.RedisErrors.translate;

import io.latchkey.spi.Deadline;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.redisson.api.RFuture;
import org.redisson.api.RScript;
import org.redisson.api.RTopic;
import org.redisson.api.RedissonClient;
import org.redisson.api.listener.BaseStatusListener;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The acquire loop that locks and semaphores share: grant attempts, each bounded and undone when given up,
 * the waiter queue beside the lock or semaphore, and the wake-ups a release sends on its wake channel.
 * What is contended for, and how an attempt is sent and undone, is a {@link Contention} of the backend's.
 *
 * <p>A client's waiters under one lock or semaphore share one subscription, which outlives them by a
 * {@code timeout} ({@link #join}).
 *
 * <p>Thread-safe: it holds the client, the timeout and the client's wake channels; an acquire's queue entry is
 * its own.
 */
final class RedisContender {

    private static final Logger log = LoggerFactory.getLogger(RedisContender.class);

    private final RedissonClient redisson;
    private final Duration timeout;
    /** Runs the sweep of the channels nobody waits on. */
    private final ScheduledExecutorService sweeper;
    /** The wake channels this client listens on, by name; guarded by itself. */
    private final Map<String, Channel> channels = new HashMap<>();
    private boolean sweepPlanned; // guarded by channels
    /** The number of {@link #channels}, read without the lock: none, and an acquire looks for none. */
    private volatile int kept;

    RedisContender(RedissonClient redisson, Duration timeout, ScheduledExecutorService sweeper) {
        this.redisson = redisson;
        this.timeout = timeout;
        this.sweeper = sweeper;
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
        /** Whether a release wakes the first waiter that listens ({@link RedisScripts#wakeFirstListening}). */
        final boolean wakesFirstListening;

        Contention(String subject, String name, String where, String waitersKey, String wakeChannel,
                boolean wakesFirstListening) {
            this.subject = subject;
            this.name = name;
            this.where = where;
            this.waitersKey = waitersKey;
            this.wakeChannel = wakeChannel;
            this.wakesFirstListening = wakesFirstListening;
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
        long queueFor = deadline.hasPassed() ? -1 : Math.max(1, deadline.remainingMillis());
        // On this client's channel before the first attempt queues it, if the client has one: the client then
        // never takes the entry for one left behind, and if the channel was subscribed already, hears from
        // the start every release that names it.
        Waiter waiter = queueFor > 0 ? join(c, field, false) : null;
        boolean listening = waiter != null && waiter.channel.confirmed();
        try {
            // Else queued by the first attempt already if there is a wait: a release between that attempt and
            // the subscription is caught by the attempt that follows the subscription.
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
                if (!listening) {
                    if (waiter == null) {
                        waiter = join(c, field, true);
                    }
                    awaitSubscribed(c, waiter, end);
                    listening = true;
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

    /** Waits, bounded, until the server confirmed the subscription of {@code waiter}'s channel. */
    private void awaitSubscribed(Contention c, Waiter waiter, Deadline end) throws InterruptedException {
        long sentAt = System.nanoTime();
        long bound = bound(end);
        String action = "while subscribing to the wake-ups of " + c.subject;
        try {
            waiter.channel.subscribed.get(bound, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            waiter.close();
            throw orPaused(didNotAnswer(c.name, c.where, action, timeout, e), c.name, c.subject, c.where,
                    action, sentAt, bound);
        } catch (ExecutionException e) {
            waiter.close();
            throw orPaused(translate(c.name, c.where, action, timeout, e), c.name, c.subject, c.where, action,
                    sentAt, bound);
        } catch (InterruptedException e) {
            waiter.close();
            throw e;
        }
    }

    /**
     * Adds {@code field} to this client's channel for {@code c}, subscribing it if {@code create} and the
     * client has none (or its subscription failed); null if it has none and not {@code create}.
     *
     * <p>The channel is this client's wake channel of what it contends for ({@link RedisKeys#clientWakeChannel}),
     * on which a release names the owner field of the waiter it wakes. The client's waiters there share
     * one subscription, as Redisson's lock waiters share their lock's channel: the first to wait subscribes,
     * and the next ones add themselves without a round trip. Where a release wakes the first waiter that
     * listens (a lock, a semaphore), the subscription stays a {@code timeout} after its last waiter is done,
     * so a client whose threads take turns at a contended lock does not subscribe and unsubscribe for most
     * of its waits; a read-write lock's waiters unsubscribe as the last one is done. Redisson subscribes its
     * channels again after it reconnects (a restart of the server), so a waiter stays reachable across a
     * restart.
     *
     * <p>A channel per client, not one per lock, because a release must know whether a waiter it names
     * still listens: an entry can outlive its waiter in the queue (a waiter whose attempt failed while the
     * server was unreachable could not leave it), and a release that woke such an entry woke nobody, leaving
     * the live waiters to their own timers. {@code PUBLISH} answers how many clients received the message,
     * so the release scripts go down the queue to the first entry whose client listens and drop the entries
     * nobody listens to. An acquire joins its client's channel before the attempt that queues it whenever
     * the client has that channel, and leaves it after its last attempt, so a field that a channel with no
     * waiters hears is an entry whose acquire is over: one it left behind, or one its grant took out since.
     * The client then drops the entry and wakes the next waiter that listens ({@link RedisScripts#PASS_ON},
     * a no-op for an entry already gone), so that a subscription kept after its waiters loses no release.
     * A field that a channel with waiters hears but none of them has wakes them all, and they try again.
     */
    private Waiter join(Contention c, String field, boolean create) {
        if (kept == 0 && !create) {
            return null;
        }
        String name = RedisKeys.clientWakeChannel(c.wakeChannel, field);
        synchronized (channels) {
            Channel channel = channels.get(name);
            if (channel == null || channel.subscribed.isCompletedExceptionally()) {
                if (!create) {
                    return null;
                }
                if (channel != null) {
                    channel.unsubscribe();
                }
                channel = new Channel(name, c);
                channels.put(name, channel);
                kept = channels.size();
            }
            Waiter waiter = new Waiter(channel, field);
            channel.waiters.put(field, waiter.wake);
            return waiter;
        }
    }

    /** A channel with no waiter left: dropped at once, or kept a {@code timeout} for the next waiter. */
    private void idle(Channel channel) {
        synchronized (channels) {
            if (!channel.waiters.isEmpty() || channels.get(channel.name) != channel) {
                return;
            }
            if (channel.lingers && !channel.subscribed.isCompletedExceptionally()) {
                planSweep();
                return;
            }
            channels.remove(channel.name);
            kept = channels.size();
        }
        channel.unsubscribe();
    }

    /** Guarded by {@link #channels}. */
    private void planSweep() {
        if (sweepPlanned) {
            return;
        }
        try {
            sweeper.schedule(this::sweep, timeout.toNanos(), TimeUnit.NANOSECONDS);
            sweepPlanned = true;
        } catch (RejectedExecutionException e) {
            // the backend is closing: close() drops the channels
        }
    }

    /** Unsubscribes the channels nobody waited on for a {@code timeout}. */
    private void sweep() {
        List<Channel> gone = new ArrayList<>();
        synchronized (channels) {
            sweepPlanned = false;
            long now = System.nanoTime();
            boolean idleLeft = false;
            for (Iterator<Channel> it = channels.values().iterator(); it.hasNext();) {
                Channel channel = it.next();
                if (!channel.waiters.isEmpty()) {
                    continue;
                }
                if (now - channel.idleSince >= timeout.toNanos()) {
                    it.remove();
                    gone.add(channel);
                } else {
                    idleLeft = true;
                }
            }
            kept = channels.size();
            if (idleLeft) {
                planSweep();
            }
        }
        gone.forEach(Channel::unsubscribe);
    }

    /** Unsubscribes every channel: the backend closes. */
    void close() {
        List<Channel> gone;
        synchronized (channels) {
            gone = new ArrayList<>(channels.values());
            channels.clear();
            kept = 0;
        }
        gone.forEach(Channel::unsubscribe);
    }

    /**
     * One wake channel of this client: its waiters' wake-ups by owner field, released by the messages that
     * name them, and all of them each time the channel is subscribed again after a reconnect.
     */
    private final class Channel {
        final String name;
        final RTopic topic;
        final boolean lingers;
        final String waitersKey;
        final String wakeChannel;
        final Map<String, Semaphore> waiters = new ConcurrentHashMap<>();
        /** Completes once the server confirmed the subscription. */
        final CompletableFuture<Integer> subscribed;
        final CompletableFuture<Integer> status;
        /** When its last waiter was done; valid while it has none. */
        volatile long idleSince = System.nanoTime();
        /** Out of {@link #channels}: what it hears is no longer passed on. */
        volatile boolean closed;

        Channel(String name, Contention c) {
            this.name = name;
            this.topic = redisson.getTopic(name, StringCodec.INSTANCE);
            this.lingers = c.wakesFirstListening;
            this.waitersKey = c.waitersKey;
            this.wakeChannel = c.wakeChannel;
            this.subscribed = topic.addListenerAsync(String.class, (channel, message) -> heard(message)).toCompletableFuture();
            // After a reconnect Redisson subscribes again, but a release published before that is not heard:
            // the waiters try once more when the channel is subscribed again, as each did after its subscription.
            this.status = topic.addListenerAsync(new BaseStatusListener() {
                @Override
                public void onSubscribe(String channel) {
                    waiters.values().forEach(Semaphore::release);
                }
            }).toCompletableFuture();
        }

        private void heard(String field) {
            Semaphore wake = waiters.get(field);
            if (wake != null) {
                wake.release();
            } else if (!waiters.isEmpty()) {
                waiters.values().forEach(Semaphore::release); // an entry this client left behind: its waiters try again
            } else if (lingers && !closed) {
                passOn(field);
            }
        }

        /** Drops {@code field}'s entry, which no waiter of this client has, and wakes the next waiter that listens. */
        private void passOn(String field) {
            redisson.getScript(StringCodec.INSTANCE).evalAsync(waitersKey, RScript.Mode.READ_WRITE, RedisScripts.PASS_ON,
                    RScript.ReturnType.LONG, List.of(waitersKey, wakeChannel), field)
                    .whenComplete((r, e) -> {
                        if (e != null) {
                            log.debug("passing on the wake-up of an entry left in {} failed", waitersKey, e);
                        }
                    });
        }

        /** Whether the server confirmed the subscription. */
        boolean confirmed() {
            return subscribed.isDone() && !subscribed.isCompletedExceptionally();
        }

        void unsubscribe() {
            closed = true;
            subscribed.thenAccept(topic::removeListenerAsync); // Redisson unsubscribes when the last listener goes
            status.thenAccept(topic::removeListenerAsync);
        }
    }

    /** A waiting acquire's place on its channel: one permit per release that named its owner. */
    private final class Waiter {
        final Channel channel;
        final String field;
        final Semaphore wake = new Semaphore(0);

        Waiter(Channel channel, String field) {
            this.channel = channel;
            this.field = field;
        }

        void close() {
            if (channel.waiters.remove(field, wake) && channel.waiters.isEmpty()) {
                channel.idleSince = System.nanoTime();
                idle(channel);
            }
        }
    }
}
