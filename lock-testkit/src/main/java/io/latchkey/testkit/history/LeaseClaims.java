package io.latchkey.testkit.history;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * What the library claimed about every lease of a test, for the exact check of rules 1 and 7
 * ({@link LeaseClaimsChecker}): when each acquire was requested and returned, every
 * {@link io.latchkey.Lease#remaining()} it answered and when it was asked, when {@code lost()}
 * completed, when the holder began to close it, and when its process was killed.
 *
 * <p>Every time is on one clock, the test JVM's {@link System#nanoTime()} ({@link History#now()}).
 * Times measured in another process are converted to it by the caller, and each lease carries the
 * error of that conversion ({@code clockError}, in nanoseconds, 0 for times read in the test JVM):
 * the true time lies within {@code ± clockError} of the one recorded. The checker places every
 * interval where it certainly was, never where it may have been, so that a violation it reports
 * happened whatever the error.
 *
 * <p>Thread-safe: records are appended under a lock.
 */
public final class LeaseClaims {

    private final List<Claim> leases = new ArrayList<>();
    private final List<Note> notes = new ArrayList<>();

    /** A line of the record, for failure messages: when, who, what. */
    public record Note(long at, String who, String what) {
    }

    /**
     * Records a grant.
     *
     * @param holder who holds it, for messages
     * @param requestedAt when the acquire was called
     * @param returnedAt when it returned the lease
     * @param clockError the error of the times of this lease's holder, in nanoseconds
     */
    public Claim granted(String holder, String lock, long token, long requestedAt, long returnedAt, long clockError) {
        Claim c = new Claim(holder, lock, token, requestedAt, returnedAt, clockError);
        synchronized (this) {
            leases.add(c);
        }
        note(returnedAt, holder, "granted token " + token + " (requested "
                + String.format("%.3f", (returnedAt - requestedAt) / 1e6) + " ms before)");
        return c;
    }

    /** Records something that is no lease's, such as a fault, for failure messages. */
    public void note(long at, String who, String what) {
        synchronized (this) {
            notes.add(new Note(at, who, what));
        }
    }

    /** Every lease recorded, in the order of recording. */
    public synchronized List<Claim> leases() {
        return List.copyOf(leases);
    }

    /** Every note, sorted by time. */
    public synchronized List<Note> notes() {
        List<Note> sorted = new ArrayList<>(notes);
        sorted.sort(Comparator.comparingLong(Note::at));
        return sorted;
    }

    /** The leases of {@code holder} that nothing has ended yet: no close begun, no loss, no kill. */
    public synchronized List<Claim> open(String holder) {
        List<Claim> out = new ArrayList<>();
        for (Claim c : leases) {
            if (c.holder.equals(holder) && c.isOpen()) {
                out.add(c);
            }
        }
        return out;
    }

    /** The holder of the latest lease that nothing has ended yet, or null. */
    public synchronized String openHolder() {
        Claim latest = null;
        for (Claim c : leases) {
            if (c.isOpen() && (latest == null || c.returnedAt - latest.returnedAt > 0)) {
                latest = c;
            }
        }
        return latest == null ? null : latest.holder;
    }

    /** Records that the process of {@code holder} was killed at {@code at} (test JVM clock): its leases end there. */
    public void holderGone(String holder, long at) {
        synchronized (this) {
            for (Claim c : leases) {
                if (c.holder.equals(holder)) {
                    c.gone(at);
                }
            }
        }
    }

    /** One lease and what the library claimed about it. Thread-safe. */
    public final class Claim {
        final String holder;
        final String lock;
        final long token;
        final long requestedAt;
        final long returnedAt;
        final long clockError;
        private long deadline; // the latest askedAt + remaining; guarded by LeaseClaims.this
        private boolean claimed;
        private Long lostAt;
        private Long releasingAt;
        private Long goneAt; // test JVM clock, no error

        private Claim(String holder, String lock, long token, long requestedAt, long returnedAt, long clockError) {
            this.holder = holder;
            this.lock = lock;
            this.token = token;
            this.requestedAt = requestedAt;
            this.returnedAt = returnedAt;
            this.clockError = clockError;
        }

        /**
         * The library answered {@code remaining()} with {@code remainingNanos}, asked at {@code askedAt}:
         * if positive, it claims validity until at least {@code askedAt + remainingNanos}.
         */
        public void claim(long askedAt, long remainingNanos) {
            synchronized (LeaseClaims.this) {
                long d = askedAt + remainingNanos;
                // zero claims nothing: not even the instant it was asked at
                if (remainingNanos > 0 && (!claimed || d - deadline > 0)) {
                    deadline = d;
                    claimed = true;
                }
            }
            if (remainingNanos <= 0) {
                note(askedAt, holder, "token " + token + ": remaining() is zero");
            }
        }

        /** {@code lost()} completed at {@code at}. */
        public void lost(long at) {
            synchronized (LeaseClaims.this) {
                if (lostAt == null) {
                    lostAt = at;
                }
            }
            note(at, holder, "token " + token + ": lost() completed");
        }

        /** The holder began to close the lease at {@code at}. */
        public void releasing(long at) {
            synchronized (LeaseClaims.this) {
                if (releasingAt == null) {
                    releasingAt = at;
                }
            }
            note(at, holder, "token " + token + ": close begins");
        }

        /** The holder's close returned at {@code at}; for messages only. */
        public void released(long at) {
            note(at, holder, "token " + token + ": closed");
        }

        void gone(long at) {
            if (goneAt == null) {
                goneAt = at;
            }
        }

        boolean isOpen() {
            return lostAt == null && releasingAt == null && goneAt == null;
        }

        /** The interval in which the library certainly claimed this lease valid; see {@link LeaseClaimsChecker}. */
        LeaseClaimsChecker.Interval interval() {
            synchronized (LeaseClaims.this) {
                long start = returnedAt + clockError;
                long end = claimed ? deadline - clockError : start;
                String endedBy = claimed ? "its claimed deadline" : "no claim";
                if (lostAt != null && lostAt - clockError - end < 0) {
                    end = lostAt - clockError;
                    endedBy = "lost()";
                }
                if (releasingAt != null && releasingAt - clockError - end < 0) {
                    end = releasingAt - clockError;
                    endedBy = "its close";
                }
                if (goneAt != null && goneAt - end < 0) {
                    end = goneAt;
                    endedBy = "the kill of its process";
                }
                return new LeaseClaimsChecker.Interval(holder, lock, token, requestedAt - clockError, returnedAt,
                        clockError, start, end, endedBy);
            }
        }

        @Override
        public String toString() {
            return "token " + token + " of " + holder;
        }
    }
}
