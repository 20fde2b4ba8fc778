package io.latchkey.kafka;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockException;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.InvalidSessionTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The acquire's side of a {@link GroupMember}: the state its polling thread reports (its join began,
 * a rebalance ended, the partition was granted, the member failed or the client is closing), and the
 * acquiring thread's wait on it until the grant, the end of the wait, or a failure it words.
 *
 * <p>Thread-safe: the polling thread reports, the acquiring thread waits, and release may report the
 * close from any thread; all under one monitor, the join's start in volatile fields.
 */
final class GrantWait {

    /** The member's logger: these lines were the member's before the wait had a class of its own. */
    private static final Logger log = LoggerFactory.getLogger(GroupMember.class);

    private final KafkaLockBackend backend;
    private final String lockName;
    private final String topic;
    /** The member's consumer group: the lock's topic, or the slot's group of a semaphore. */
    private final String group;
    /** "lock 'x'" or "semaphore 'x'", for messages. */
    private final String what;
    private final String clientId;
    /** The member id the coordinator gave the member, empty before it joined. */
    private final Supplier<String> memberId;
    private final long timeoutNanos;

    private final Object state = new Object();
    private boolean granted; // guarded by state
    private int rebalances; // guarded by state
    private Throwable failure; // guarded by state
    /**
     * When the polling thread first polled, which sends this member's JoinGroup; valid once
     * {@link #joinStarted}. A zero wait's stay past its deadline counts from here, so that the member's
     * own set-up (the topic's lookup, the consumer's construction in a cold JVM) is not taken from it.
     */
    private volatile long joinStartedNanos;
    private volatile boolean joinStarted;

    GrantWait(KafkaLockBackend backend, String lockName, String topic, String group, String what, String clientId,
            Supplier<String> memberId) {
        this.backend = backend;
        this.lockName = lockName;
        this.topic = topic;
        this.group = group;
        this.what = what;
        this.clientId = clientId;
        this.memberId = memberId;
        this.timeoutNanos = backend.options().timeout().toNanos();
    }

    /** The polling thread is about to send the member's JoinGroup, at {@code nanos}. */
    void onJoinStarted(long nanos) {
        joinStartedNanos = nanos;
        joinStarted = true;
    }

    /** The member was assigned the partition. */
    void onGranted() {
        synchronized (state) {
            granted = true;
        }
    }

    /** A rebalance the member took part in ended, whether or not it granted the partition. */
    void onRebalanceEnded() {
        synchronized (state) {
            rebalances++;
            state.notifyAll();
        }
    }

    /** The polling thread failed with {@code e}, which the acquire throws, worded. */
    void onFailure(Throwable e) {
        synchronized (state) {
            failure = e;
            state.notifyAll();
        }
    }

    /** The member is released: an acquire still waiting for it ends. */
    void onRelease() {
        synchronized (state) {
            if (!granted && failure == null) {
                // wakes an acquire still waiting on this member (the client is closing)
                failure = new ClosedWhileAcquiring("the lock client was closed while " + what
                        + " (kafka topic '" + topic + "') was being acquired");
            }
            state.notifyAll();
        }
    }

    boolean granted() {
        synchronized (state) {
            return granted;
        }
    }

    /**
     * Waits until this member is assigned the partition or {@code untilNanos} passes, asking nothing of
     * the coordinator and staying no longer.
     *
     * @return whether it was granted
     */
    boolean awaitGranted(long untilNanos) throws InterruptedException {
        synchronized (state) {
            while (!granted && failure == null) {
                long left = untilNanos - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(state, left);
            }
            if (granted) {
                return true;
            }
            throw translate(failure);
        }
    }

    /**
     * Waits until this member is assigned the partition. After the deadline it still waits for the
     * first rebalance it takes part in, so that even a zero wait asks the group once.
     *
     * <p>A member whose own join has not finished by then (a new name's topic, the group's first
     * join, a slow start) asks the coordinator whether anyone holds the partition, and while no one does it
     * stays for its join until a whole timeout after the deadline: a free lock (slot) is never reported as
     * held. If its join has not finished by then either, nobody held it at the last look, and the call
     * throws {@link LockBackendUnavailableException} saying so. The stay counts from the later of the
     * deadline and the start of this member's join ({@link #stayFrom}): a zero wait's own set-up is not
     * taken from the rebalance it stays for.
     *
     * @param knownName whether this client used the lock's name before (its topic known)
     * @return false if the lock (the slot) stayed held until the deadline
     */
    boolean await(long deadlineNanos, boolean knownName) throws InterruptedException {
        boolean staying = false; // a permit was free at the last look past the deadline
        int looked = 0; // the rebalances ended at that look
        long joinDeadline;
        long stayDeadline;
        while (true) {
            int ended;
            synchronized (state) {
                while (true) {
                    long from = stayFrom(deadlineNanos);
                    joinDeadline = from + timeoutNanos / 2;
                    stayDeadline = from + timeoutNanos; // its own join, while nobody holds its partition
                    if (failure != null) {
                        throw translate(failure);
                    }
                    if (granted) {
                        return true;
                    }
                    long now = System.nanoTime();
                    if (now - deadlineNanos >= 0 && rebalances > looked) {
                        break;
                    }
                    long until = now - deadlineNanos < 0 ? deadlineNanos : staying ? stayDeadline : joinDeadline;
                    if (now - until >= 0) {
                        break;
                    }
                    TimeUnit.NANOSECONDS.timedWait(state, Math.max(1, until - now));
                }
                ended = rebalances;
            }
            if (ended > looked && knownName) {
                // a rebalance this member took part in ended and gave the lock's one partition to another
                // member: held, known without asking the coordinator (a known name costs no admin request).
                // On a name this client has not used yet the group may have been assigned before the new
                // topic's metadata reached it, which gives the partition to no one: that one asks.
                return false;
            }
            long now = System.nanoTime();
            if (staying && now - stayDeadline >= 0) {
                if (ended == looked) {
                    // nobody held it at the last look, and no rebalance ended since: not "held"
                    throw joinUnfinished(stayDeadline - stayFrom(deadlineNanos));
                }
                return false; // the rebalance in flight did not end in time (a silent member holds it up)
            }
            long bound = staying ? Math.min(timeoutNanos / 2, stayDeadline - now) : timeoutNanos / 2;
            int holders = backend.holders(lockName, group, memberId.get(), bound);
            if (holders < 0) {
                // No answer, so neither held nor free is known: nobody held it at the last look while
                // staying, else the coordinator may be gone. Never "held" on no evidence.
                throw staying ? joinUnfinished(stayDeadline - stayFrom(deadlineNanos)) : unavailable(deadlineNanos);
            }
            boolean late = System.nanoTime() - stayDeadline >= 0;
            if (holders == 0 && late) {
                throw joinUnfinished(stayDeadline - stayFrom(deadlineNanos));
            }
            if (holders != 0 || late) {
                return false;
            }
            if (!staying) {
                log.debug("{}: member {} stays for its join of group '{}': nobody holds its partition", what, clientId, group);
            }
            staying = true;
            looked = ended;
        }
    }

    /**
     * Where the stays past {@code deadlineNanos} begin: the later of the deadline and the start of this
     * member's join. A join that has not started yet (the consumer still being built) moves it on, for
     * at most a timeout past the deadline: to the call's bound.
     */
    private long stayFrom(long deadlineNanos) {
        long joined = joinStarted ? joinStartedNanos : Math.min(System.nanoTime(),
                Deadline.atNanoTime(deadlineNanos).callBound(backend.options().timeout()).nanoTime());
        return joined - deadlineNanos > 0 ? joined : deadlineNanos;
    }

    /**
     * Why a lock's acquire failed whose own join did not finish in time while nobody held the lock: not
     * "held", which would be false, but a coordinator that did not complete the rebalance.
     */
    private LockBackendUnavailableException joinUnfinished(long stayedNanos) {
        return new LockBackendUnavailableException(lockName, "nobody holds " + what + " (kafka topic '" + topic
                + "'), but the group coordinator did not complete this member's join within "
                + Durations.format(Duration.ofNanos(stayedNanos)) + " of its start (a new broker creating its offsets"
                + " topic, or a silent member holding up the rebalance until its session ends); try again, or wait longer",
                null);
    }

    /** Why an acquire that neither joined a rebalance nor heard the coordinator in time failed. */
    private LockBackendUnavailableException unavailable(long deadlineNanos) {
        String paused = KafkaErrors.pausedFor(Deadline.atNanoTime(deadlineNanos), Duration.ofNanos(timeoutNanos));
        if (paused != null) {
            return new LockBackendUnavailableException(lockName, "acquiring " + what + " (kafka topic '" + topic
                    + "') gave up: " + paused, null);
        }
        return new LockBackendUnavailableException(lockName, "the group coordinator of kafka topic '" + topic
                + "' (" + what + ") did not answer within " + Durations.format(backend.options().timeout())
                + "; check that the brokers run and that the __consumer_offsets topic has leaders", null);
    }

    private RuntimeException translate(Throwable e) {
        if (e instanceof ClosedWhileAcquiring closed) {
            return closed;
        }
        if (e instanceof LockException worded) {
            return worded; // the grant marker's failure, worded where it was written
        }
        if (e instanceof InvalidSessionTimeoutException) {
            return new LockException(lockName, "the broker refused lease " + Durations.format(backend.options().lease())
                    + " as the session timeout of consumer group '" + group + "' (" + what + "): " + e.getMessage()
                    + "; choose a lease within the broker's " + KafkaConnect.MIN_SESSION + " and "
                    + KafkaConnect.MAX_SESSION, e);
        }
        LockException refused = backend.errors().authorizationFailure(lockName, e instanceof GroupAuthorizationException
                ? "READ group '" + group + "' (join the lock's consumer group)"
                : "DESCRIBE and READ topic '" + topic + "' (subscribe to the lock's topic)", e);
        if (refused != null) {
            return refused;
        }
        LockException security = backend.errors().securityFailure(lockName, "joining consumer group '" + group + "' of "
                + what, e);
        if (security != null) {
            return security;
        }
        return new LockBackendUnavailableException(lockName, "joining consumer group '" + group + "' of " + what
                + " failed: " + e + "; check that the brokers run and are reachable", e);
    }

    /** The acquire that waited on this member ends because the client is closing. */
    private static final class ClosedWhileAcquiring extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        ClosedWhileAcquiring(String message) {
            super(message);
        }
    }
}
