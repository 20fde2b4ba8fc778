package io.latchkey.cli.demo;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every event of the demo on one time line, and what the summary computes from it: leases as
 * intervals from grant to the earlier of release and the last validity deadline the holder's library
 * claimed, and the pairs of those intervals that overlap, which must be none.
 *
 * <p>Thread-safe: workers' reader threads add, the demo's thread reads.
 */
final class History {

    /** A lease as the summary sees it: valid from {@code start} to {@code end}, on the shared clock. */
    record Interval(String worker, long token, long start, long end) {
    }

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

    /** Every lease, in grant order. */
    synchronized List<Interval> leases() {
        Map<String, long[]> open = new LinkedHashMap<>(); // worker/token -> start, claimed deadline, release
        for (Event e : sorted()) {
            String key = e.worker() + "/" + e.token();
            switch (e.kind()) {
                case "GRANT" -> open.put(key, new long[] {e.nanos(), e.value(), Long.MAX_VALUE});
                case "VALID" -> {
                    long[] l = open.get(key);
                    if (l != null && e.value() - l[1] > 0) {
                        l[1] = e.value();
                    }
                }
                case "RELEASE", "CLOSED" -> {
                    long[] l = open.get(key);
                    if (l != null) {
                        l[2] = e.value();
                    }
                }
                default -> {
                }
            }
        }
        List<Interval> leases = new ArrayList<>();
        open.forEach((key, l) -> leases.add(new Interval(key.substring(0, key.lastIndexOf('/')),
                Long.parseLong(key.substring(key.lastIndexOf('/') + 1)), l[0], l[2] - l[1] < 0 ? l[2] : l[1])));
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
