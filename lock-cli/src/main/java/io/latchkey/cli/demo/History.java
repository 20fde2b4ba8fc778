package io.latchkey.cli.demo;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every event of the demo on one time line, and what the summary computes from it: leases as
 * intervals from grant to the earliest of the moment {@code lost()} completed, the release, and the
 * latest validity deadline the holder's library claimed (at the grant and at every check); the pairs
 * of those intervals that overlap, which must be none; and spurious losses, which should be none.
 *
 * <p>The holder's own next check is not the end of its lease: a loss signalled between two checks
 * ends the lease when it is signalled, and a holder that looks only later has been told already.
 *
 * <p>Thread-safe: workers' reader threads add, the demo's thread reads.
 */
final class History {

    /** How a lease's interval ended. */
    enum End {
        /** {@code lost()} completed. */
        LOST,
        /** Its holder let go of it. */
        RELEASE,
        /** The latest validity deadline its library claimed passed first (the holder was killed, paused, or looked late). */
        DEADLINE
    }

    /**
     * A lease as the summary sees it: valid from {@code start} to {@code end}, on the shared clock; {@code lostAt}
     * is when {@code lost()} completed, or {@link Long#MAX_VALUE} if it never did.
     */
    record Interval(String worker, long token, long start, long end, End endedBy, long lostAt) {
    }

    /** A fault the demo injected: from {@code start} to {@code end}, against {@code victim}, or every worker if null. */
    record Fault(String what, String victim, long start, long end) {
        boolean covers(long nanos) {
            return nanos - start >= 0 && end - nanos >= 0;
        }
    }

    private final List<Fault> faults = new ArrayList<>();

    private final List<Event> events = new ArrayList<>();

    synchronized void add(Event e) {
        events.add(e);
    }

    synchronized List<Event> events() {
        return List.copyOf(events);
    }

    /** The events in the order they happened; each worker's arrive in order, but the workers interleave. */
    private List<Event> sorted() {
        List<Event> all = new ArrayList<>(events);
        all.sort(Comparator.comparingLong(Event::nanos));
        return all;
    }

    /** The first grant at or after {@code nanos} to a worker other than {@code except}, or null. */
    synchronized Event grantAfter(long nanos, String except) {
        for (Event e : sorted()) {
            if (e.kind().equals("GRANT") && e.nanos() - nanos >= 0 && !e.worker().equals(except)) {
                return e;
            }
        }
        return null;
    }

    /** Whether {@code worker} has written successfully with {@code token}. */
    synchronized boolean wrote(String worker, long token) {
        return events.stream().anyMatch(e -> e.worker().equals(worker) && e.token() == token && e.kind().equals("WRITE_OK"));
    }

    /** Records a fault the demo injected, once it is over. */
    synchronized void fault(String what, String victim, long start, long end) {
        faults.add(new Fault(what, victim, start, end));
    }

    /** Every lease, in grant order. */
    synchronized List<Interval> leases() {
        Map<String, long[]> open = new LinkedHashMap<>(); // worker/token -> start, claimed deadline, release, lost
        for (Event e : sorted()) {
            String key = e.worker() + "/" + e.token();
            switch (e.kind()) {
                case "GRANT" -> open.put(key, new long[] {e.nanos(), e.value(), Long.MAX_VALUE, Long.MAX_VALUE});
                case "VALID" -> {
                    long[] l = open.get(key);
                    if (l != null && e.value() - l[1] > 0) {
                        l[1] = e.value();
                    }
                }
                case "RELEASE" -> {
                    long[] l = open.get(key);
                    if (l != null) {
                        l[2] = e.nanos();
                    }
                }
                case "LOSS" -> {
                    long[] l = open.get(key);
                    if (l != null && l[3] == Long.MAX_VALUE) {
                        l[3] = e.nanos();
                    }
                }
                default -> {
                }
            }
        }
        List<Interval> leases = new ArrayList<>();
        open.forEach((key, l) -> {
            long end = l[1];
            End by = End.DEADLINE;
            if (l[2] != Long.MAX_VALUE && l[2] - end < 0) {
                end = l[2];
                by = End.RELEASE;
            }
            if (l[3] != Long.MAX_VALUE && l[3] - end < 0) {
                end = l[3];
                by = End.LOST;
            }
            leases.add(new Interval(key.substring(0, key.lastIndexOf('/')),
                    Long.parseLong(key.substring(key.lastIndexOf('/') + 1)), l[0], end, by, l[3]));
        });
        leases.sort(Comparator.comparingLong(Interval::start));
        return leases;
    }

    /** Pairs of leases of different grants whose validity intervals overlap. */
    List<Interval[]> overlaps() {
        List<Interval> leases = leases();
        List<Interval[]> overlaps = new ArrayList<>();
        for (int i = 0; i < leases.size(); i++) {
            for (int j = i + 1; j < leases.size(); j++) {
                if (leases.get(j).start() - leases.get(i).end() < 0) {
                    overlaps.add(new Interval[] {leases.get(i), leases.get(j)});
                }
            }
        }
        return overlaps;
    }

    /**
     * Leases whose {@code lost()} completed while no fault was active and no other lease was valid: the
     * library gave up a lock nobody had taken from it, for no reason the demo caused. Not a breach of
     * mutual exclusion, but a holder stopped for nothing. A lease held by a fault's victim when the fault
     * began is not counted: a paused holder finds its lease lost when it wakes, after the fault.
     */
    synchronized List<Interval> spuriousLosses() {
        List<Interval> leases = leases();
        List<Interval> spurious = new ArrayList<>();
        for (Interval l : leases) {
            if (l.endedBy() != End.LOST) {
                continue;
            }
            long at = l.lostAt();
            boolean faulted = faults.stream().anyMatch(f -> f.covers(at)
                    || (l.worker().equals(f.victim()) && f.start() - l.start() >= 0 && at - f.start() >= 0));
            boolean otherValid = leases.stream().anyMatch(o -> o != l && at - o.start() >= 0 && o.end() - at > 0);
            if (!faulted && !otherValid) {
                spurious.add(l);
            }
        }
        return spurious;
    }

    /** Whether tokens strictly increase in grant order. */
    boolean tokensIncrease() {
        List<Interval> leases = leases();
        for (int i = 1; i < leases.size(); i++) {
            if (leases.get(i).token() <= leases.get(i - 1).token()) {
                return false;
            }
        }
        return true;
    }

    synchronized long count(String kind) {
        return events.stream().filter(e -> e.kind().equals(kind)).count();
    }

    /** Grants that went to a different worker than the grant before. */
    synchronized long handOvers() {
        long n = 0;
        String last = null;
        for (Event e : sorted()) {
            if (e.kind().equals("GRANT")) {
                if (last != null && !last.equals(e.worker())) {
                    n++;
                }
                last = e.worker();
            }
        }
        return n;
    }
}
