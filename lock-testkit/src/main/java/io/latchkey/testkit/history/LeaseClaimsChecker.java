package io.latchkey.testkit.history;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Checks {@link LeaseClaims} against rules 1, 7 and 8 exactly: each lease is the interval from the
 * moment its acquire returned to the earliest of the moment its holder began to close it, the
 * completion of its {@code lost()}, the latest deadline the library claimed for it (every
 * {@code remaining()} answer added to the moment it was asked) and the kill of its process. Rule 7
 * says a lease stops claiming validity, by its deadline or by {@code lost()}, before another can be
 * granted; rule 1 then says that no two intervals of one lock name intersect.
 *
 * <ul>
 *   <li>No two intervals of one lock overlap.</li>
 *   <li>Tokens increase with grant order: along the intervals of one lock, in time, each token exceeds
 *       every earlier one; and a grant requested after another returned has a greater token, whether
 *       or not either claimed any validity.</li>
 *   <li>Availability ({@link #availability}): after a fault, some acquire of the lock returns within a
 *       bound.</li>
 * </ul>
 *
 * <p>Every interval is shrunk by its clock error at both ends ({@link LeaseClaims}): what is checked is
 * where it certainly was. Stateless and thread-safe.
 */
public final class LeaseClaimsChecker {

    private static final int SHOWN_NOTES = 80;

    private LeaseClaimsChecker() {
    }

    /**
     * Where a lease certainly claimed validity.
     *
     * @param requestedAt the earliest its acquire may have been called
     * @param returnedAt when its acquire returned, as recorded
     * @param clockError the error of its holder's times
     * @param start the latest its acquire may have returned
     * @param end the earliest its claim may have ended; not after {@code start} for a lease that claimed nothing
     * @param endedBy what ended it
     */
    public record Interval(String holder, String lock, long token, long requestedAt, long returnedAt, long clockError,
            long start, long end, String endedBy) {

        boolean isEmpty() {
            return end - start <= 0;
        }

        @Override
        public String toString() {
            return "token " + token + " of " + holder;
        }
    }

    /** A fault after which the lock must be granted again: within {@code bound} of {@code from}. */
    public record Fault(String what, long at, long from, Duration bound) {
    }

    /** The interval of every lease of {@code claims}. */
    public static List<Interval> intervals(LeaseClaims claims) {
        return claims.leases().stream().map(LeaseClaims.Claim::interval).collect(Collectors.toList());
    }

    /** The violations of rules 1, 7 and 8 in {@code intervals}, with times from {@code origin}; empty if there are none. */
    public static List<String> violations(List<Interval> intervals, long origin) {
        List<String> out = new ArrayList<>();
        Map<String, List<Interval>> byLock = intervals.stream()
                .collect(Collectors.groupingBy(Interval::lock, LinkedHashMap::new, Collectors.toList()));
        for (List<Interval> one : byLock.values()) {
            overlapsAndTokens(one, out, origin);
            requestedAfterReturned(one, out);
        }
        return out;
    }

    /**
     * The violations of availability: for each fault, the first acquire of {@code lock} that returned
     * after the fault's {@code from} returned within its bound (it certainly did not, if reported).
     */
    public static List<String> availability(List<Interval> intervals, String lock, List<Fault> faults, long origin) {
        List<String> out = new ArrayList<>();
        for (Fault f : faults) {
            Interval first = intervals.stream().filter(i -> i.lock.equals(lock) && i.returnedAt + i.clockError - f.from >= 0)
                    .min(Comparator.comparingLong(Interval::returnedAt)).orElse(null);
            if (first == null) {
                out.add("after " + f.what + " at " + ms(f.at - origin) + " lock '" + lock + "' was never granted again;"
                        + " it had to be within " + f.bound.toMillis() + " ms");
                continue;
            }
            long took = first.returnedAt - first.clockError - f.from;
            if (took - f.bound.toNanos() > 0) {
                out.add("after " + f.what + " at " + ms(f.at - origin) + " lock '" + lock + "' was granted again only "
                        + ms(took) + " later (to " + first + "), beyond the bound of " + f.bound.toMillis() + " ms");
            }
        }
        return out;
    }

    /** The notes of {@code claims} around {@code at} (within {@code window}), readable, for failure messages. */
    public static String describe(LeaseClaims claims, long origin, long at, Duration window) {
        List<LeaseClaims.Note> notes = claims.notes().stream()
                .filter(n -> Math.abs(n.at() - at) <= window.toNanos()).collect(Collectors.toList());
        return describe(notes, origin);
    }

    /** The last notes of {@code claims}, readable, for failure messages. */
    public static String describe(LeaseClaims claims, long origin) {
        List<LeaseClaims.Note> notes = claims.notes();
        return describe(notes.subList(Math.max(0, notes.size() - SHOWN_NOTES), notes.size()), origin);
    }

    private static String describe(List<LeaseClaims.Note> notes, long origin) {
        StringBuilder b = new StringBuilder();
        for (LeaseClaims.Note n : notes) {
            b.append(String.format("  %10.3f ms  %-14s %s%n", (n.at() - origin) / 1e6, n.who(), n.what()));
        }
        return b.toString();
    }

    private static void overlapsAndTokens(List<Interval> intervals, List<String> out, long origin) {
        List<Interval> sorted = intervals.stream().filter(i -> !i.isEmpty()).sorted(Comparator.comparingLong(Interval::start))
                .collect(Collectors.toList());
        Interval reaching = null; // the interval seen so far that reaches furthest
        Interval highest = null; // the one with the highest token so far
        for (Interval i : sorted) {
            if (reaching != null && i.start - reaching.end < 0) {
                out.add("two valid leases of '" + i.lock + "' at once: " + reaching + " claimed validity (until "
                        + reaching.endedBy + ") " + ms(reaching.end - i.start) + " past the grant of " + i
                        + " (clock errors " + ms(reaching.clockError) + " and " + ms(i.clockError)
                        + " already taken off; " + reaching + " from " + ms(reaching.start - origin) + " to "
                        + ms(reaching.end - origin) + ", " + i + " from " + ms(i.start - origin) + ")");
            }
            if (highest != null && i.token <= highest.token) {
                out.add("token did not increase with grant order: " + i + " was granted after " + highest
                        + " had claimed validity, with a token not greater");
            }
            if (reaching == null || i.end - reaching.end > 0) {
                reaching = i;
            }
            if (highest == null || i.token > highest.token) {
                highest = i;
            }
        }
    }

    private static void requestedAfterReturned(List<Interval> intervals, List<String> out) {
        // sorted by the latest each may have returned; a running maximum of tokens
        List<Interval> byReturn = new ArrayList<>(intervals);
        byReturn.sort(Comparator.comparingLong(Interval::start));
        Interval[] maxUpTo = new Interval[byReturn.size()];
        for (int k = 0; k < byReturn.size(); k++) {
            Interval i = byReturn.get(k);
            maxUpTo[k] = k == 0 || i.token > maxUpTo[k - 1].token ? i : maxUpTo[k - 1];
        }
        for (Interval later : intervals) {
            // the grants that certainly returned before this acquire was called
            int lo = 0;
            int hi = byReturn.size();
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (byReturn.get(mid).start - later.requestedAt < 0) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            if (lo > 0 && maxUpTo[lo - 1].token >= later.token) {
                out.add("token did not increase with grant order: " + later + " was requested after " + maxUpTo[lo - 1]
                        + " had been granted, with a token not greater");
            }
        }
    }

    private static String ms(long nanos) {
        return String.format("%.3f ms", nanos / 1e6);
    }
}
