package io.latchkey.spring;

import io.latchkey.LockListener;
import io.latchkey.LockLostException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The grants this application's client holds now, kept from its lock events: each {@code acquired}
 * adds one, each {@code released} removes one (every grant ends with exactly one), and {@code lost}
 * marks one lost until it is released. For {@link LatchkeyEndpoint} and the count in
 * {@link LatchkeyHealthCheck}.
 *
 * <p>Events come on the client's event thread, so the list trails the grants by the time the events
 * take; events the client drops when its event queue is full are missing here too (the client logs
 * that). Of several grants of one target (the readers of one read-write lock on several threads) a
 * release ends the one whose hold time it reports.
 *
 * <p>Thread-safe.
 */
final class HeldLeases implements LockListener {

    /** One grant: what, its token, when it was told, and whether it was lost. */
    private static final class Held {
        final Target target;
        final long token;
        final Instant since = Instant.now();
        final long sinceNanos = System.nanoTime();
        boolean lost; // guarded by HeldLeases.this

        Held(Target target, long token) {
            this.target = target;
            this.token = token;
        }
    }

    private final List<Held> held = new ArrayList<>(); // guarded by this

    @Override
    public synchronized void acquired(Target target, Duration waitTime, long fencingToken) {
        held.add(new Held(target, fencingToken));
    }

    @Override
    public synchronized void lost(Target target, LockLostException reason) {
        held.stream().filter(h -> h.target.equals(target) && !h.lost).findFirst().ifPresent(h -> h.lost = true);
    }

    @Override
    public synchronized void released(Target target, Duration holdTime) {
        long acquiredAt = System.nanoTime() - holdTime.toNanos();
        held.stream().filter(h -> h.target.equals(target))
                .min(Comparator.comparingLong(h -> Math.abs(h.sinceNanos - acquiredAt)))
                .ifPresent(held::remove);
    }

    /** How many grants are held now, but those of {@code name} (the health check's own lock). */
    synchronized long countExcept(String name) {
        return held.stream().filter(h -> !h.target.name().equals(name)).count();
    }

    /** Every grant held now, by name, then slot: name, kind, slot (permits), token, since, lost. */
    synchronized List<Map<String, Object>> snapshot() {
        return held.stream().sorted(Comparator.comparing((Held h) -> h.target.name()).thenComparingInt(h -> h.target.slot()))
                .map(HeldLeases::describe).toList();
    }

    private static Map<String, Object> describe(Held h) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", h.target.name());
        m.put("kind", h.target.kind().name().toLowerCase(Locale.ROOT));
        if (h.target.kind() == Target.Kind.PERMIT) {
            m.put("slot", h.target.slot());
            m.put("permits", h.target.permits());
        }
        m.put("token", h.token);
        m.put("since", h.since.toString());
        m.put("lost", h.lost);
        return m;
    }
}
