package io.latchkey.micrometer;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockListener;
import io.latchkey.LockListener.Target;
import io.latchkey.LockLostException;
import io.latchkey.Revocation;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Turns the {@link LockListener lock events} of a {@link LockClient}, for its locks, its semaphores'
 * permits and its candidates' election terms, into Micrometer meters.
 *
 * <pre>{@code
 * LockClient client = LockClient.connect("redis://localhost:6379");
 * LatchkeyMetrics.monitor(client, registry);
 * }</pre>
 *
 * <p>Meters of locks, every one tagged {@code backend} (and {@code lock}, the lock name, only if
 * {@link Builder#lockNameTag(boolean)} is on: lock names may be unbounded, so the tag is off by
 * default), plus any common tags given:
 * <ul>
 *   <li>timer {@code latchkey.acquire}, tag {@code outcome} = {@code acquired}, {@code not_acquired}
 *       or {@code error}: the time from the call to the grant, the end of the wait, or the failure;</li>
 *   <li>timer {@code latchkey.hold}: the time from the grant to the close of its last lease;</li>
 *   <li>counter {@code latchkey.lost}, tag {@code reason} = {@code backend}, {@code expired} or
 *       {@code at_most} ({@link LockLostException.Reason}): leases lost;</li>
 *   <li>gauge {@code latchkey.leases.held}: grants acquired and not yet released;</li>
 *   <li>counter {@code latchkey.slot.skipped}: tasks skipped because their schedule slot was done;</li>
 *   <li>counter {@code latchkey.backend.unavailable}: acquires and releases that could not reach the
 *       backend.</li>
 * </ul>
 * Permits of semaphores ({@link LockListener.Target.Kind#PERMIT}) have meters of their own, so that
 * the lock meters count locks alone: {@code latchkey.permit.acquire} (the same {@code outcome}s),
 * {@code latchkey.permit.hold}, {@code latchkey.permit.lost} (the same {@code reason}s), the gauge
 * {@code latchkey.permit.held} (permits granted and not yet released) and
 * {@code latchkey.permit.backend.unavailable}; with {@link Builder#lockNameTag(boolean)} on, the
 * semaphore's name is tag {@code semaphore}. The permit slot is no tag (up to a thousand values).
 * The two modes of read-write locks ({@link LockListener.Target.Kind#READ} and
 * {@link LockListener.Target.Kind#WRITE}) have the same meters under {@code latchkey.read.} and
 * {@code latchkey.write.} ({@code latchkey.read.acquire}, {@code latchkey.read.held}, ...), the name
 * in tag {@code lock}, so that a dashboard sees readers and writers apart and the lock meters count locks.
 * Percentiles and histograms of the timers are left to the registry's configuration (a
 * {@code MeterFilter}), as Micrometer's own binders do.
 *
 * <p>Meters of elections ({@link LockListener#elected}, {@link LockListener#revoked}), tagged
 * {@code backend} and, with {@link Builder#lockNameTag(boolean)} on, {@code election} (the election's
 * name; off by default for the same reason as the lock name):
 * <ul>
 *   <li>counter {@code latchkey.election.elected}: terms won by candidates of the client;</li>
 *   <li>counter {@code latchkey.election.revoked}, tag {@code reason} = {@code lost}, {@code resigned}
 *       or {@code closed} ({@link Revocation}): terms ended;</li>
 *   <li>timer {@code latchkey.election.leading}: the time led per term, from the grant of the term's
 *       lock to its revocation, recorded as the term ends;</li>
 *   <li>gauge {@code latchkey.election.leaders}: terms won and not yet ended, that is the candidacies
 *       leading now.</li>
 * </ul>
 * The election's lock is a lock: its grants count in the lock meters too, and a candidate that waits
 * to lead records an {@code acquire} with outcome {@code not_acquired} every minute it waits (each
 * attempt of a candidacy waits a minute, then it asks again).
 *
 * <p>An instance is bound to one registry ({@link #bindTo}); events that arrive before are not
 * counted. It may listen to several clients of the same backend. Thread-safe: events arrive on the
 * clients' event threads.
 */
public final class LatchkeyMetrics implements MeterBinder, LockListener {

    private final String backend;
    private final boolean lockNameTag;
    private final Tags commonTags;
    private final Family locks = new Family("latchkey.", "latchkey.leases.held", "lock", "lock");
    private final Family permits = new Family("latchkey.permit.", "latchkey.permit.held", "semaphore", "permit");
    private final Family reads = new Family("latchkey.read.", "latchkey.read.held", "lock", "read lock");
    private final Family writes = new Family("latchkey.write.", "latchkey.write.held", "lock", "write lock");
    private final AtomicInteger leaders = new AtomicInteger();
    private final ConcurrentHashMap<String, AtomicInteger> leadersByName = new ConcurrentHashMap<>();
    private volatile MeterRegistry registry;

    /**
     * The meters of one kind of grant: their names' prefix, the name of the held gauge, the tag that
     * carries the lock's or semaphore's name, and the word the descriptions use.
     */
    private final class Family {
        final String prefix;
        final String heldName;
        final String nameTag;
        final String what;
        final AtomicInteger held = new AtomicInteger();
        final ConcurrentHashMap<String, AtomicInteger> heldByName = new ConcurrentHashMap<>();

        Family(String prefix, String heldName, String nameTag, String what) {
            this.prefix = prefix;
            this.heldName = heldName;
            this.nameTag = nameTag;
            this.what = what;
        }

        void bind(MeterRegistry r) {
            heldGauge(r, held, null);
            // The acquire timer's outcomes exist from the start, so that a dashboard shows zero, not nothing.
            if (!lockNameTag) {
                for (String outcome : new String[] {"acquired", "not_acquired", "error"}) {
                    acquireTimer(r, null, outcome);
                }
            }
        }

        void acquired(MeterRegistry r, String name, Duration waitTime) {
            acquireTimer(r, name, "acquired").record(waitTime);
            held.incrementAndGet();
            if (lockNameTag) {
                heldByName.computeIfAbsent(name, n -> heldGauge(r, new AtomicInteger(), n)).incrementAndGet();
            }
        }

        void released(MeterRegistry r, String name, Duration holdTime) {
            Timer.builder(prefix + "hold").description("Time from the grant of a " + what + " to its release")
                    .tags(tags(name)).register(r).record(holdTime);
            held.decrementAndGet();
            if (lockNameTag) {
                heldByName.computeIfAbsent(name, n -> heldGauge(r, new AtomicInteger(), n)).decrementAndGet();
            }
        }

        void count(MeterRegistry r, String meter, String description, String name) {
            Counter.builder(prefix + meter).description(description).tags(tags(name)).register(r).increment();
        }

        void lost(MeterRegistry r, String name, LockLostException reason) {
            Counter.builder(prefix + "lost").description("Leases lost")
                    .tags(tags(name)).tag("reason", reason.reason().name().toLowerCase(Locale.ROOT))
                    .register(r).increment();
        }

        Timer acquireTimer(MeterRegistry r, String name, String outcome) {
            return Timer.builder(prefix + "acquire").description("Time to acquire a " + what + ", or to give up or fail")
                    .tags(tags(name)).tag("outcome", outcome).register(r);
        }

        private AtomicInteger heldGauge(MeterRegistry r, AtomicInteger n, String name) {
            Gauge.builder(heldName, n, AtomicInteger::get)
                    .description("Grants of " + what + "s acquired and not yet released")
                    .tags(tags(name)).register(r);
            return n;
        }

        private Tags tags(String name) {
            Tags t = commonTags.and("backend", backend);
            return lockNameTag && name != null ? t.and(nameTag, name) : t;
        }
    }

    private LatchkeyMetrics(Builder b) {
        this.backend = b.backend;
        this.lockNameTag = b.lockNameTag;
        this.commonTags = b.tags;
    }

    /** Binds metrics of {@code client} to {@code registry}, with the defaults: no lock name tag. */
    public static LatchkeyMetrics monitor(LockClient client, MeterRegistry registry) {
        return builder(client.backendName()).build().register(client, registry);
    }

    /** A builder of metrics for clients of {@code backend} (the value of the {@code backend} tag). */
    public static Builder builder(String backend) {
        return new Builder(backend);
    }

    /** Registers these metrics with {@code registry} and as a listener of {@code client}; returns this. */
    public LatchkeyMetrics register(LockClient client, MeterRegistry registry) {
        bindTo(registry);
        client.addListener(this);
        return this;
    }

    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        if (this.registry != null && this.registry != registry) {
            throw new IllegalStateException("these lock metrics are bound to another registry already;"
                    + " use a CompositeMeterRegistry to publish to several");
        }
        this.registry = registry;
        locks.bind(registry);
        permits.bind(registry);
        reads.bind(registry);
        writes.bind(registry);
        leadersGauge(registry, leaders, null);
        // As for the acquire timers: the election meters exist from the start, so that a dashboard shows zero.
        if (!lockNameTag) {
            electedCounter(registry, null);
            for (Revocation why : Revocation.values()) {
                revokedCounter(registry, null, why);
            }
            leadingTimer(registry, null);
        }
    }

    /** The meters of {@code target}'s kind; a kind added to lock-api fails this switch until it has its own. */
    private Family of(Target target) {
        return switch (target.kind()) {
            case LOCK -> locks;
            case PERMIT -> permits;
            case READ -> reads;
            case WRITE -> writes;
        };
    }

    @Override
    public void acquired(Target target, Duration waitTime, long fencingToken) {
        ifBound(r -> of(target).acquired(r, target.name(), waitTime));
    }

    @Override
    public void notAcquired(Target target, Duration waitTime) {
        ifBound(r -> of(target).acquireTimer(r, target.name(), "not_acquired").record(waitTime));
    }

    @Override
    public void acquireFailed(Target target, Duration waitTime, LockException exception) {
        ifBound(r -> of(target).acquireTimer(r, target.name(), "error").record(waitTime));
    }

    @Override
    public void released(Target target, Duration holdTime) {
        ifBound(r -> of(target).released(r, target.name(), holdTime));
    }

    @Override
    public void lost(Target target, LockLostException reason) {
        ifBound(r -> of(target).lost(r, target.name(), reason));
    }

    @Override
    public void backendUnavailable(Target target, LockBackendUnavailableException exception) {
        ifBound(r -> of(target).count(r, "backend.unavailable", "Acquires and releases that could not reach the backend", target.name()));
    }

    @Override
    public void slotSkipped(String lockName, Instant slot, Instant recordedSlot) {
        ifBound(r -> locks.count(r, "slot.skipped", "Tasks skipped because their schedule slot was done", lockName));
    }

    @Override
    public void elected(String election, long term) {
        ifBound(r -> {
            electedCounter(r, election).increment();
            leaders.incrementAndGet();
            if (lockNameTag) {
                leadersByName.computeIfAbsent(election, n -> leadersGauge(r, new AtomicInteger(), n)).incrementAndGet();
            }
        });
    }

    @Override
    public void revoked(String election, long term, Revocation why, Duration led) {
        ifBound(r -> {
            revokedCounter(r, election, why).increment();
            leadingTimer(r, election).record(led);
            leaders.decrementAndGet();
            if (lockNameTag) {
                leadersByName.computeIfAbsent(election, n -> leadersGauge(r, new AtomicInteger(), n)).decrementAndGet();
            }
        });
    }

    private Counter electedCounter(MeterRegistry r, String election) {
        return Counter.builder("latchkey.election.elected").description("Election terms won")
                .tags(electionTags(election)).register(r);
    }

    private Counter revokedCounter(MeterRegistry r, String election, Revocation why) {
        return Counter.builder("latchkey.election.revoked").description("Election terms ended")
                .tags(electionTags(election)).tag("reason", why.name().toLowerCase(Locale.ROOT)).register(r);
    }

    private Timer leadingTimer(MeterRegistry r, String election) {
        return Timer.builder("latchkey.election.leading").description("Time led per election term")
                .tags(electionTags(election)).register(r);
    }

    private AtomicInteger leadersGauge(MeterRegistry r, AtomicInteger n, String election) {
        Gauge.builder("latchkey.election.leaders", n, AtomicInteger::get)
                .description("Election terms won and not yet ended").tags(electionTags(election)).register(r);
        return n;
    }

    private Tags electionTags(String election) {
        Tags t = commonTags.and("backend", backend);
        return lockNameTag && election != null ? t.and("election", election) : t;
    }

    /** Runs {@code record} on the registry once bound; events that arrive before are not counted. */
    private void ifBound(Consumer<MeterRegistry> record) {
        MeterRegistry r = registry;
        if (r != null) {
            record.accept(r);
        }
    }

    @Override
    public String toString() {
        return "LatchkeyMetrics{backend=" + backend + ", lockNameTag=" + lockNameTag + '}';
    }

    /** Builds {@link LatchkeyMetrics}. Not thread-safe. */
    public static final class Builder {

        private final String backend;
        private boolean lockNameTag;
        private Tags tags = Tags.empty();

        private Builder(String backend) {
            Objects.requireNonNull(backend, "backend");
            if (backend.isEmpty()) {
                throw new IllegalArgumentException("backend tag must not be empty");
            }
            this.backend = backend;
        }

        /**
         * Whether meters carry the lock name as tag {@code lock} (or {@code semaphore}, and an election's
         * name as tag {@code election}); off by default: one series per name.
         */
        public Builder lockNameTag(boolean lockNameTag) {
            this.lockNameTag = lockNameTag;
            return this;
        }

        /** Tags added to every meter. */
        public Builder tags(Iterable<Tag> tags) {
            this.tags = this.tags.and(tags);
            return this;
        }

        /** The metrics, to {@link LatchkeyMetrics#register register} with a client and a registry. */
        public LatchkeyMetrics build() {
            return new LatchkeyMetrics(this);
        }
    }
}
