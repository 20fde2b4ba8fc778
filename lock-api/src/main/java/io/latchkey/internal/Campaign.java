package io.latchkey.internal;

import io.latchkey.Candidacy;
import io.latchkey.DistributedLock;
import io.latchkey.ElectionListener;
import io.latchkey.Lease;
import io.latchkey.Leadership;
import io.latchkey.LockException;
import io.latchkey.LockLostException;
import io.latchkey.LockOptions;
import io.latchkey.Revocation;
import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Durations;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Candidacy}: one thread that takes the election's lock, waiting as long as it takes, tells
 * the listener {@code elected}, waits until the term is lost, resigned or closed, tells the listener
 * {@code revoked}, releases the lock, and campaigns again.
 *
 * <p>The thread waits for the end of a term with the term's own validity deadline as its bound, so it
 * wakes at that deadline even if {@code lost()} were late, and tells {@code revoked} then; after a
 * pause of this process it wakes past the deadline and tells at once. An acquire that fails (the
 * backend unreachable, or a backend's {@code IllegalStateException} while the client is open) is
 * tried again after {@link #retryPause}, with one warning per outage. A closed client ends the
 * candidacy as {@link #close()} does.
 *
 * <p>The client's {@link io.latchkey.LockListener}s hear of each term from its owner's events, queued
 * (never under the guard) just before the candidate's own listener is told: {@code elected} once the
 * term began, {@code revoked} with its reason and the time led, from the grant of the term's lock (the
 * start of the lock's hold time) to that moment. A candidacy on a client other than the shared one has
 * no such events.
 */
final class Campaign implements Candidacy, Runnable {

    private static final Logger log = LoggerFactory.getLogger(Campaign.class);
    private static final ThreadFactory THREADS = DaemonThreads.factory("latchkey-election");
    /** How long one acquire of the campaign waits; it then simply asks again. */
    static final Duration CAMPAIGN_WAIT = Duration.ofMinutes(1);

    private final DistributedLock lock;
    private final ElectionListener listener;
    /** The client that closes this candidacy first when it closes, or {@code null}. */
    private final SharedLockClient owner;
    private final LockOptions options;
    final Thread thread; // read by the tests
    private final Object guard = new Object();
    private boolean closed; // guarded by guard
    private boolean acquiring; // guarded by guard: the thread may be interrupted only while it acquires
    private boolean resigning; // guarded by guard
    private Duration standAside = Duration.ZERO; // guarded by guard
    private boolean woken; // guarded by guard: the term's end may have come, look again
    private volatile Term current;

    private Campaign(LockOptions options, DistributedLock lock, ElectionListener listener, SharedLockClient owner) {
        this.owner = owner;
        this.options = options;
        this.lock = lock;
        this.listener = listener;
        this.thread = THREADS.newThread(this);
    }

    static Campaign start(LockOptions options, DistributedLock lock, ElectionListener listener,
            SharedLockClient owner) {
        Campaign campaign = new Campaign(options, lock, listener, owner);
        if (owner != null) {
            owner.campaigns.add(campaign);
        }
        campaign.thread.start();
        return campaign;
    }

    /**
     * Whether the client this candidacy campaigns with is closed. A client other than the shared one
     * (an application's own implementation) cannot be asked: its {@code IllegalStateException} is taken
     * to mean closed, as the API documents for every client.
     */
    private boolean clientClosed() {
        return owner == null || owner.isClosed();
    }

    /** The pause before an acquire that failed is tried again: a quarter of the lease, at most a second. */
    private Duration retryPause() {
        Duration quarter = options.lease().dividedBy(4);
        return quarter.compareTo(Duration.ofSeconds(1)) < 0 ? quarter : Duration.ofSeconds(1);
    }

    @Override
    public String electionName() {
        return lock.name();
    }

    @Override
    public boolean isLeader() {
        return leadership().isPresent();
    }

    @Override
    public Optional<Leadership> leadership() {
        Term term = current;
        synchronized (guard) {
            if (term == null || closed || resigning) {
                return Optional.empty();
            }
        }
        // never under the guard: the lease's loss callback takes the guard while the lease holds its own lock
        return term.isValid() ? Optional.of(term) : Optional.empty();
    }

    @Override
    public void resign() {
        resign(options.lease());
    }

    @Override
    public void resign(Duration standAside) {
        Objects.requireNonNull(standAside, "standAside");
        if (standAside.isNegative()) {
            throw new IllegalArgumentException("the stand-aside after resigning election '" + lock.name()
                    + "' must not be negative: " + standAside);
        }
        synchronized (guard) {
            Term term = current;
            if (term != null && !closed) {
                resigning = true;
                term.ended = true; // not valid from now on; revoked and the release follow on the thread
                this.standAside = standAside;
                woken = true;
                guard.notifyAll();
            }
        }
    }

    @Override
    public void close() {
        synchronized (guard) {
            if (!closed) {
                closed = true;
                Term term = current;
                if (term != null) {
                    term.ended = true;
                }
                woken = true;
                guard.notifyAll();
                if (acquiring) {
                    thread.interrupt(); // an interrupted acquire leaves nothing held
                }
            }
        }
        if (Thread.currentThread() != thread) {
            try {
                thread.join(options.timeout().multipliedBy(2).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void run() {
        try {
            boolean failing = false;
            while (true) {
                Optional<Lease> got;
                synchronized (guard) {
                    if (closed) {
                        return;
                    }
                    acquiring = true;
                }
                try {
                    got = lock.tryLock(CAMPAIGN_WAIT);
                    failing = false;
                } catch (InterruptedException e) {
                    continue; // closed: the loop ends above
                } catch (IllegalStateException | LockException e) {
                    if (e instanceof IllegalStateException && clientClosed()) {
                        log.debug("election '{}': the client is closed, the candidacy ends", lock.name());
                        return;
                    }
                    if (!failing) {
                        log.warn("election '{}': campaigning failed, trying again every {}: {}", lock.name(),
                                Durations.format(retryPause()), e.getMessage());
                    }
                    failing = true;
                    pause(retryPause());
                    continue;
                } finally {
                    synchronized (guard) {
                        acquiring = false;
                        Thread.interrupted(); // an interrupt meant for the acquire is spent
                    }
                }
                if (got.isPresent()) {
                    lead(new Term(got.get()));
                }
            }
        } finally {
            current = null;
            if (owner != null) {
                owner.campaigns.remove(this);
            }
        }
    }

    /**
     * One term: elected, then its end, revoked and the release; then the stand-aside after a
     * resignation. The lease is never read under the guard: its loss callback takes the guard while
     * the lease holds its own lock, so reading it under the guard could deadlock with that callback.
     */
    private void lead(Term term) {
        boolean closedMeanwhile;
        synchronized (guard) {
            closedMeanwhile = closed;
            if (!closedMeanwhile) {
                current = term;
                woken = false;
            }
        }
        if (closedMeanwhile) { // closed while the acquire returned: never elected
            release(term);
            return;
        }
        term.lease.lost().whenComplete((e, t) -> {
            synchronized (guard) {
                woken = true;
                guard.notifyAll();
            }
        });
        if (owner != null) {
            owner.events().elected(lock.name(), term.term());
        }
        tell(() -> listener.elected(term), "elected");
        while (true) {
            boolean valid = term.lease.isValid();
            Duration left = term.lease.remaining();
            synchronized (guard) {
                if (closed || resigning || !valid) {
                    break;
                }
                if (!woken) {
                    waitOnGuard(left); // the term's deadline bounds the wait, so its end is told at once
                }
                woken = false;
            }
        }
        boolean lost = term.lease.lost().toCompletableFuture().isDone();
        // a lease the client ended as it closed is not lost; a validity deadline just passed is
        boolean clientClosed = !lost && term.lease instanceof SharedLease shared && shared.grant.ended();
        Revocation why;
        Duration stand = Duration.ZERO;
        synchronized (guard) {
            why = lost ? Revocation.LOST : closed || clientClosed ? Revocation.CLOSED
                    : resigning ? Revocation.RESIGNED : Revocation.LOST;
            if (why == Revocation.RESIGNED) {
                stand = standAside;
            }
            resigning = false;
            current = null;
            term.ended = true;
        }
        // told first, so that the leader's work stops before the lock goes to the next leader, and a lost
        // term is told at its deadline, not a release's round trip later (to a backend that may be cut off)
        if (owner != null) {
            owner.events().revoked(lock.name(), term.term(), why, Duration.ofNanos(System.nanoTime() - term.grantedAt));
        }
        tell(() -> listener.revoked(term, why), "revoked");
        release(term);
        pause(stand); // after a resignation, so that another candidate takes over
    }

    private void release(Term term) {
        try {
            term.lease.close();
        } catch (LockException e) {
            log.debug("election '{}': the release of term {} did not reach the backend; it expires within the lease: {}",
                    lock.name(), term.term(), e.getMessage());
        }
    }

    /** Waits on the guard, held by the caller, for at most {@code bound} (at least a millisecond). */
    private void waitOnGuard(Duration bound) {
        try {
            guard.wait(Math.max(1, bound.toMillis()));
        } catch (InterruptedException e) {
            // only close() interrupts, and only an acquire; the loops check closed
        }
    }

    private void pause(Duration bound) {
        synchronized (guard) {
            long until = System.nanoTime() + bound.toNanos();
            long left;
            while (!closed && (left = until - System.nanoTime()) > 0) {
                waitOnGuard(Duration.ofNanos(left));
            }
        }
    }

    private void tell(Runnable call, String what) {
        try {
            call.run();
        } catch (RuntimeException e) {
            log.warn("election '{}': the listener's {} threw; the candidacy goes on", lock.name(), what, e);
        }
    }

    @Override
    public String toString() {
        Term term = current;
        return "Candidacy{" + lock.name() + (term == null ? "" : ", term " + term.term()) + '}';
    }

    /** A term: the lease of the election's lock, seen as a {@link Leadership}. */
    private final class Term implements Leadership {
        final Lease lease;
        /** The {@link System#nanoTime()} of the grant of the term's lock, or of its return if unknown. */
        final long grantedAt;
        /**
         * Set by a resignation or a close, or before {@code revoked} is told: from then on the term is not
         * valid, though its lock is held until {@code revoked} returned.
         */
        volatile boolean ended;

        Term(Lease lease) {
            this.lease = lease;
            this.grantedAt = lease instanceof SharedLease shared ? shared.grant.grantedAt : System.nanoTime();
        }

        @Override
        public String electionName() {
            return lock.name();
        }

        @Override
        public long term() {
            return lease.fencingToken();
        }

        @Override
        public boolean isValid() {
            return !ended && lease.isValid();
        }

        @Override
        public void ensureValid() {
            lease.ensureValid(); // a lost term says so first
            if (ended) {
                throw new IllegalStateException("term " + term() + " of election '" + lock.name() + "' has ended");
            }
        }

        @Override
        public Duration remaining() {
            return ended ? Duration.ZERO : lease.remaining();
        }

        @Override
        public CompletionStage<LockLostException> lost() {
            return lease.lost();
        }

        @Override
        public String toString() {
            return "Leadership{" + lock.name() + ", term " + term() + ", valid=" + isValid() + '}';
        }
    }
}
