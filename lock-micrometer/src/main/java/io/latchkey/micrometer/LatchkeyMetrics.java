package io.latchkey.micrometer;

import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockListener;
import io.latchkey.LockLostException;
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

/**
 * Turns the {@link LockListener lock events} of a {@link LockClient} into Micrometer meters.
 *
 * <pre>{@code
 * LockClient client = LockClient.connect("redis://localhost:6379");
 * LatchkeyMetrics.monitor(client, registry);
 * }</pre>
 *
 * <p>Meters, every one tagged {@code backend} (and {@code lock}, the lock name, only if
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
 * Percentiles and histograms of the timers are left to the registry's configuration (a
 * {@code MeterFilter}), as Micrometer's own binders do.
 *
 * <p>An instance is bound to one registry ({@link #bindTo}); events that arrive before are not
 * counted. It may listen to several clients of the same backend. Thread-safe: events arrive on the
 * clients' event threads.
 */
public final class LatchkeyMetrics implements MeterBinder, LockListener {

    private final String backend;
    private final boolean lockNameTag;
    private final Tags commonTags;
    private final AtomicInteger held = new AtomicInteger();
    private final ConcurrentHashMap<String, AtomicInteger> heldByLock = new ConcurrentHashMap<>();
    private volatile MeterRegistry registry;

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
        Gauge.builder("latchkey.leases.held", held, AtomicInteger::get)
                .description("Grants of locks acquired and not yet released")
                .tags(tags(null))
                .register(registry);
        // The acquire timer's outcomes exist from the start, so that a dashboard shows zero, not nothing.
        if (!lockNameTag) {
            for (String outcome : new String[] {"acquired", "not_acquired", "error"}) {
                acquireTimer(registry, null, outcome);
            }
        }
    }

    @Override
    public void acquired(String lockName, Duration waitTime, long fencingToken) {
        MeterRegistry r = registry;
        if (r == null) {
            return;
        }
        acquireTimer(r, lockName, "acquired").record(waitTime);
        held.incrementAndGet();
        if (lockNameTag) {
            heldOf(r, lockName).incrementAndGet();
        }
    }

    @Override
    public void notAcquired(String lockName, Duration waitTime) {
        MeterRegistry r = registry;
        if (r != null) {
            acquireTimer(r, lockName, "not_acquired").record(waitTime);
        }
    }

    @Override
    public void acquireFailed(String lockName, Duration waitTime, LockException exception) {
        MeterRegistry r = registry;
        if (r != null) {
            acquireTimer(r, lockName, "error").record(waitTime);
        }
    }

    @Override
    public void released(String lockName, Duration holdTime) {
        MeterRegistry r = registry;
        if (r == null) {
            return;
        }
        Timer.builder("latchkey.hold").description("Time from the grant of a lock to its release")
                .tags(tags(lockName)).register(r).record(holdTime);
        held.decrementAndGet();
        if (lockNameTag) {
            heldOf(r, lockName).decrementAndGet();
        }
    }

    @Override
    public void lost(String lockName, LockLostException reason) {
        MeterRegistry r = registry;
        if (r != null) {
            Counter.builder("latchkey.lost").description("Leases lost")
                    .tags(tags(lockName)).tag("reason", reason.reason().name().toLowerCase(Locale.ROOT))
                    .register(r).increment();
        }
    }

    @Override
    public void backendUnavailable(String lockName, LockBackendUnavailableException exception) {
        MeterRegistry r = registry;
        if (r != null) {
            Counter.builder("latchkey.backend.unavailable").description("Acquires and releases that could not reach the backend")
                    .tags(tags(lockName)).register(r).increment();
        }
    }

    @Override
    public void slotSkipped(String lockName, Instant slot, Instant recordedSlot) {
        MeterRegistry r = registry;
        if (r != null) {
            Counter.builder("latchkey.slot.skipped").description("Tasks skipped because their schedule slot was done")
                    .tags(tags(lockName)).register(r).increment();
        }
    }

    private Timer acquireTimer(MeterRegistry r, String lockName, String outcome) {
        return Timer.builder("latchkey.acquire").description("Time to acquire a lock, or to give up or fail")
                .tags(tags(lockName)).tag("outcome", outcome).register(r);
    }

    private AtomicInteger heldOf(MeterRegistry r, String lockName) {
        return heldByLock.computeIfAbsent(lockName, name -> {
            AtomicInteger n = new AtomicInteger();
            Gauge.builder("latchkey.leases.held", n, AtomicInteger::get)
                    .description("Grants of locks acquired and not yet released")
                    .tags(tags(name)).register(r);
            return n;
        });
    }

    private Tags tags(String lockName) {
        Tags t = commonTags.and("backend", backend);
        return lockNameTag && lockName != null ? t.and("lock", lockName) : t;
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

        /** Whether meters carry the lock name as tag {@code lock} (off by default: one series per name). */
        public Builder lockNameTag(boolean lockNameTag) {
            this.lockNameTag = lockNameTag;
            return this;
        }

        /** Tags added to every meter. */
        public Builder tags(Iterable<Tag> tags) {
            this.tags = this.tags.and(tags);
            return this;
        }

        public LatchkeyMetrics build() {
            return new LatchkeyMetrics(this);
        }
    }
}
