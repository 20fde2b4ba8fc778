package io.latchkey.testkit.history;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Checks a {@link History} against the safety rules of the contract (docs/contract.md, rules 1 and 8),
 * and a history of semaphore permits against its number of permits ({@link #assertPermitsRespected}).
 *
 * <ul>
 *   <li>No overlap between valid leases: per lock, the spans in which two different grants were seen
 *       valid never intersect; and a grant once seen invalid is never seen valid again.</li>
 *   <li>Tokens increase with grant order: a grant that was requested after another was granted has a
 *       strictly greater token.</li>
 *   <li>The fenced resource never accepts a stale write: no write is accepted after a write with a
 *       higher token was accepted, and no write of a holder is accepted once a grant requested after
 *       its own was returned (it was superseded: with a token that went backwards, or with a later
 *       holder that had not written yet, the resource alone cannot tell).</li>
 * </ul>
 *
 * <p>A span runs from the grant's {@code ACQUIRED} event to its last {@code VALID} event: validity is
 * one contiguous interval, so the lease was certainly valid over all of it (see {@link History} for
 * why those times never overstate what was seen). A grant with no {@code VALID} event after it
 * returned has no certain span. Stateless and thread-safe.
 */
public final class HistoryChecker {

    private static final int SHOWN_EVENTS = 60;

    private HistoryChecker() {
    }

    /** Fails with every violation found, and the events around them. */
    public static void assertConsistent(History history) {
        List<Event> events = history.events();
        List<String> violations = violations(events);
        if (!violations.isEmpty()) {
            throw new AssertionError(violations.size() + " violation(s) in a history of " + events.size() + " events:\n  "
                    + String.join("\n  ", violations) + "\n" + describe(events));
        }
    }

    /**
     * Fails if the fenced resource accepted a stale write; the weaker check, for a backend that may
     * lose exclusion in a failover (asynchronous replication) and relies on fencing there.
     */
    public static void assertNoStaleWriteAccepted(History history) {
        List<Event> events = history.events();
        List<String> violations = new ArrayList<>();
        staleWrites(events, violations);
        if (!violations.isEmpty()) {
            throw new AssertionError(String.join("\n  ", violations) + "\n" + describe(events));
        }
    }

    /** The violations in {@code events}; empty if there are none. */
    public static List<String> violations(List<Event> events) {
        List<String> out = new ArrayList<>();
        Map<Integer, Span> spans = spans(events, out);
        Map<String, List<Span>> byLock = spans.values().stream()
                .collect(Collectors.groupingBy(s -> s.lock, LinkedHashMap::new, Collectors.toList()));
        for (List<Span> lockSpans : byLock.values()) {
            overlaps(lockSpans, out);
            tokenOrder(lockSpans, out);
        }
        staleWrites(events, out);
        return out;
    }

    /**
     * Fails with every violation found in a history of semaphore permits ({@link History#acquiredPermit}):
     * the rules of {@link #assertConsistent} per slot, and at no instant more than {@code permits} valid
     * leases of one semaphore, nor a slot outside {@code 0..permits-1}.
     */
    public static void assertPermitsRespected(History history, int permits) {
        List<Event> events = history.events();
        List<String> violations = permitViolations(history, permits);
        if (!violations.isEmpty()) {
            throw new AssertionError(violations.size() + " violation(s) in a history of " + events.size() + " events:\n  "
                    + String.join("\n  ", violations) + "\n" + describe(events));
        }
    }

    /** The violations of {@link #assertPermitsRespected}; empty if there are none. */
    public static List<String> permitViolations(History history, int permits) {
        List<Event> events = history.events();
        List<String> out = violations(events);
        Map<Integer, Span> spans = spans(events, new ArrayList<>());
        Map<String, List<Span>> bySemaphore = new LinkedHashMap<>();
        for (Span s : spans.values()) {
            History.Permit permit = history.permitOf(s.grant);
            if (permit == null) {
                continue;
            }
            bySemaphore.computeIfAbsent(permit.semaphore(), k -> new ArrayList<>()).add(s);
            if (permit.slot() < 0 || permit.slot() >= permits) {
                out.add(s + " of semaphore '" + permit.semaphore() + "' holds slot " + permit.slot() + ", outside 0.."
                        + (permits - 1));
            }
        }
        for (Map.Entry<String, List<Span>> e : bySemaphore.entrySet()) {
            List<Span> valid = e.getValue().stream().filter(s -> s.seenValid).collect(Collectors.toList());
            // the most leases valid at once are valid at the start of one of them
            for (Span s : valid) {
                List<Span> atOnce = valid.stream().filter(t -> t.start - s.start <= 0 && t.end - s.start >= 0)
                        .collect(Collectors.toList());
                if (atOnce.size() > permits) {
                    out.add(atOnce.size() + " valid leases of semaphore '" + e.getKey() + "' of " + permits
                            + " permits at once, when " + s + " was granted: " + atOnce);
                }
            }
        }
        return out;
    }

    /**
     * Fails with every violation found in a history of read-write grants ({@link History#acquiredMode}):
     * per name, no span of a write overlaps any other span (read or write), while reads may overlap one
     * another; a grant seen invalid is never seen valid again; and one token sequence: a write's token is
     * above every grant's returned before the write was requested, a read's above every such write's.
     */
    public static void assertModesRespected(History history) {
        List<Event> events = history.events();
        List<String> violations = modeViolations(history);
        if (!violations.isEmpty()) {
            throw new AssertionError(violations.size() + " violation(s) in a history of " + events.size() + " events:\n  "
                    + String.join("\n  ", violations) + "\n" + describe(events));
        }
    }

    /** The violations of {@link #assertModesRespected}; empty if there are none. */
    public static List<String> modeViolations(History history) {
        List<String> out = new ArrayList<>();
        Map<String, List<Span>> byName = new LinkedHashMap<>();
        for (Span s : spans(history.events(), out).values()) {
            Boolean write = history.modeOf(s.grant);
            if (write != null) {
                s.write = write;
                byName.computeIfAbsent(s.lock, k -> new ArrayList<>()).add(s);
            }
        }
        for (List<Span> spans : byName.values()) {
            List<Span> valid = spans.stream().filter(s -> s.seenValid).toList();
            for (Span w : valid) {
                if (!w.write) {
                    continue;
                }
                for (Span other : valid) {
                    if (other != w && other.start - w.end <= 0 && w.start - other.end <= 0) {
                        out.add("a write and another lease of '" + w.lock + "' valid at once: write " + w + " over "
                                + (other.write ? "write " : "read ") + other);
                    }
                }
            }
            for (Span later : spans) {
                for (Span earlier : spans) {
                    if ((later.write || earlier.write) && earlier.start - later.requestedAt < 0 && earlier.token >= later.token) {
                        out.add("token did not increase across modes: " + (later.write ? "write " : "read ") + later
                                + " was requested " + ms(later.requestedAt - earlier.start) + " after "
                                + (earlier.write ? "write " : "read ") + earlier + " was granted");
                    }
                }
            }
        }
        return out;
    }

    /**
     * Fails unless the lock {@code lock} was granted again within {@code bound} after {@code from}
     * (on the history's clock): availability after a fault.
     */
    public static void assertAvailableWithin(History history, String lock, long from, Duration bound) {
        List<Event> events = history.events();
        Event first = events.stream()
                .filter(e -> e.kind() == Event.Kind.ACQUIRED && e.lock().equals(lock) && e.at() - from >= 0)
                .min(Comparator.comparingLong(Event::at)).orElse(null);
        if (first == null) {
            throw new AssertionError("lock '" + lock + "' was never granted after the fault; it had to be within "
                    + bound + "\n" + describe(events));
        }
        Duration took = Duration.ofNanos(first.at() - from);
        if (took.compareTo(bound) > 0) {
            throw new AssertionError("lock '" + lock + "' was granted again " + took.toMillis() + " ms after the fault,"
                    + " later than the bound of " + bound.toMillis() + " ms\n" + describe(events));
        }
    }

    /**
     * Fails unless some permit of semaphore {@code semaphore} was granted within {@code bound} after
     * {@code from}: availability of a semaphore after a fault, whatever the slot.
     */
    public static void assertPermitAvailableWithin(History history, String semaphore, long from, Duration bound) {
        List<Event> events = history.events();
        Event first = events.stream()
                .filter(e -> e.kind() == Event.Kind.ACQUIRED && e.at() - from >= 0)
                .filter(e -> history.permitOf(e.grant()) != null && history.permitOf(e.grant()).semaphore().equals(semaphore))
                .min(Comparator.comparingLong(Event::at)).orElse(null);
        if (first == null) {
            throw new AssertionError("no permit of semaphore '" + semaphore + "' was granted after the fault; one had to be"
                    + " within " + bound + "\n" + describe(events));
        }
        Duration took = Duration.ofNanos(first.at() - from);
        if (took.compareTo(bound) > 0) {
            throw new AssertionError("a permit of semaphore '" + semaphore + "' was granted again " + took.toMillis()
                    + " ms after the fault, later than the bound of " + bound.toMillis() + " ms\n" + describe(events));
        }
    }

    /** The last events of the history, readable, for failure messages. */
    public static String describe(List<Event> events) {
        long origin = events.isEmpty() ? 0 : events.get(0).at();
        StringBuilder b = new StringBuilder("history (ms from the first event");
        int from = Math.max(0, events.size() - SHOWN_EVENTS);
        b.append(from > 0 ? ", last " + SHOWN_EVENTS + " of " + events.size() + "):\n" : "):\n");
        for (Event e : events.subList(from, events.size())) {
            b.append(String.format("  %10.3f %-14s %-22s grant #%-4d token %-6d '%s'%n", (e.at() - origin) / 1e6,
                    e.kind(), e.actor(), e.grant(), e.token(), e.lock()));
        }
        return b.toString();
    }

    private static Map<Integer, Span> spans(List<Event> events, List<String> out) {
        Map<Integer, Span> spans = new LinkedHashMap<>();
        Map<Integer, Event> invalidAt = new HashMap<>();
        for (Event e : events) {
            if (e.kind() == Event.Kind.ACQUIRED) {
                spans.put(e.grant(), new Span(e));
                continue;
            }
            Span s = spans.get(e.grant());
            if (s == null) {
                continue; // faults, or events of a grant recorded elsewhere
            }
            if (e.kind() == Event.Kind.INVALID) {
                invalidAt.putIfAbsent(e.grant(), e);
            } else if (e.kind() == Event.Kind.VALID) {
                Event invalid = invalidAt.get(e.grant());
                if (invalid != null && e.at() - invalid.at() > 0) {
                    out.add("grant #" + e.grant() + " of '" + e.lock() + "' (" + e.actor() + ", token " + e.token()
                            + ") was seen valid again " + ms(e.at() - invalid.at()) + " after it was seen invalid");
                }
                if (e.at() - s.start >= 0 && (!s.seenValid || e.at() - s.end > 0)) {
                    s.end = e.at();
                    s.seenValid = true;
                }
            }
        }
        return spans;
    }

    private static void overlaps(List<Span> spans, List<String> out) {
        // a grant never checked after it returned proves no instant of validity, so it cannot overlap
        List<Span> sorted = spans.stream().filter(s -> s.seenValid).sorted(Comparator.comparingLong(s -> s.start))
                .collect(Collectors.toList());
        Span reaching = null; // the span seen so far that reaches furthest
        for (Span s : sorted) {
            if (reaching != null && s.start - reaching.end <= 0) {
                out.add("two valid leases of '" + s.lock + "' at once: " + reaching + " was seen valid until "
                        + ms(reaching.end - s.start) + " after " + s + " was granted");
            }
            if (reaching == null || s.end - reaching.end > 0) {
                reaching = s;
            }
        }
    }

    private static void tokenOrder(List<Span> spans, List<String> out) {
        List<Span> sorted = new ArrayList<>(spans);
        sorted.sort(Comparator.comparingLong(s -> s.start));
        for (Span later : sorted) {
            for (Span earlier : sorted) {
                if (earlier.start - later.requestedAt < 0 && earlier.token >= later.token) {
                    out.add("token did not increase with grant order: " + later + " was requested "
                            + ms(later.requestedAt - earlier.start) + " after " + earlier + " was granted");
                }
            }
        }
    }

    private static void staleWrites(List<Event> events, List<String> out) {
        Map<String, Event> highest = new HashMap<>();
        Map<String, List<Event>> grants = new HashMap<>();
        Map<Integer, Event> grantOf = new HashMap<>();
        for (Event e : events) {
            if (e.kind() == Event.Kind.ACQUIRED) {
                grants.computeIfAbsent(e.lock(), k -> new ArrayList<>()).add(e);
                grantOf.put(e.grant(), e);
            }
        }
        for (Event e : events) {
            if (e.kind() != Event.Kind.WRITE_ACCEPTED) {
                continue;
            }
            Event top = highest.get(e.lock());
            if (top != null && e.token() < top.token()) {
                out.add("the fenced resource of '" + e.lock() + "' accepted a stale write: token " + e.token() + " of "
                        + e.actor() + " (grant #" + e.grant() + ") after token " + top.token() + " of " + top.actor()
                        + " (grant #" + top.grant() + ")");
            } else {
                highest.put(e.lock(), e);
            }
            Event own = grantOf.get(e.grant());
            if (own == null) {
                continue;
            }
            for (Event later : grants.getOrDefault(e.lock(), List.of())) {
                // a grant requested after this one returned, and returned before this write: this writer was superseded
                if (later.requestedAt() - own.at() > 0 && later.at() - e.at() < 0) {
                    out.add("the fenced resource of '" + e.lock() + "' accepted a write of a superseded holder: "
                            + e.actor() + " (grant #" + e.grant() + ", token " + e.token() + ") wrote "
                            + ms(e.at() - later.at()) + " after grant #" + later.grant() + " to " + later.actor()
                            + " (token " + later.token() + "), which was requested after it");
                    break;
                }
            }
        }
    }

    private static String ms(long nanos) {
        return String.format("%.3f ms", nanos / 1e6);
    }

    /** The span in which one grant was seen valid. */
    private static final class Span {
        final int grant;
        final String actor;
        final String lock;
        final long token;
        final long requestedAt;
        final long start;
        long end;
        boolean seenValid;
        boolean write;

        Span(Event acquired) {
            this.grant = acquired.grant();
            this.actor = acquired.actor();
            this.lock = acquired.lock();
            this.token = acquired.token();
            this.requestedAt = acquired.requestedAt();
            this.start = acquired.at();
            this.end = acquired.at();
        }

        @Override
        public String toString() {
            return "grant #" + grant + " to " + actor + " (token " + token + ")";
        }
    }
}
