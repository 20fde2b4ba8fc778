package io.latchkey.testkit;

import io.latchkey.testkit.fault.ChildHolder;
import io.latchkey.testkit.fault.CuttableChild;
import io.latchkey.testkit.history.History;
import io.latchkey.testkit.history.LeaseClaims;
import io.latchkey.testkit.history.LeaseClaimsChecker;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rules 1, 7 and 8 under faults chosen at random (Jepsen-style): {@value #CHILDREN} holders in child
 * JVMs, each behind a cut of its own ({@link ServerContract#newCuttableChild()}), contend for one lock
 * name in a loop (acquire, hold for up to a quarter lease while asking {@code remaining()}, release),
 * while a seeded schedule injects one fault after another: kill -9 of the holder, SIGSTOP of the
 * holder past the lease then SIGCONT, a cut of one child, of the holder, of every child at once (their
 * traffic held, then delivered, as TCP does), a pause of the server, a restart of the server.
 *
 * <p>{@link LeaseClaimsChecker} then proves, exactly, that the intervals in which the library claimed a
 * lease valid (from its grant to the earliest of its close, its {@code lost()}, its latest claimed
 * deadline and the kill of its process) never overlap, that tokens grow with grants, and that after
 * each fault the lock was granted again within the kit's {@link #failoverBound()} (plus the holding
 * time of a holder the fault did not stop, where it may not have).
 *
 * <p>One clock: each child reports its events on its own {@link System#nanoTime()}, and the test places
 * that clock on its own by a handshake ({@code clock}): the child's reading lies between the send of
 * the request and the receipt of the answer, so the offset is known within half that round trip, the
 * smallest of several. That half round trip is the stated clock error; the checker takes it off both
 * ends of every interval. Both clocks are this machine's monotonic clock, so their rates agree.
 *
 * <p>The seed is {@code -Dlatchkey.randomized.seed=<n>} (random if absent) and is in every failure's
 * message; the run lasts about 40 s of faults, or {@code -Dlatchkey.randomized.minutes=<m>} for a
 * soak. Tagged {@code randomized-faults}: {@code -Dtest=<contract test> -Dgroups=randomized-faults}
 * runs this group alone.
 */
@Tag("randomized-faults")
abstract class RandomizedFaultsTests extends ContractGroup {

    private static final Logger LOG = LoggerFactory.getLogger(RandomizedFaultsTests.class);
    static final String SEED_PROPERTY = "latchkey.randomized.seed";
    static final String MINUTES_PROPERTY = "latchkey.randomized.minutes";
    /** The faults of a run in {@code verify}: with child start-up and the last fault's recovery, about a minute. */
    static final Duration DEFAULT_RUN = Duration.ofSeconds(40);
    static final int CHILDREN = 3;
    /** How many {@code clock} round trips place a child's clock; the shortest counts. */
    private static final int CLOCK_SAMPLES = 8;

    enum Kind {
        KILL_HOLDER, PAUSE_HOLDER, CUT_ONE, CUT_HOLDER, CUT_ALL, SERVER_PAUSE, SERVER_RESTART
    }

    private final LeaseClaims claims = new LeaseClaims();
    private final List<LeaseClaimsChecker.Fault> faults = new ArrayList<>();
    private final Map<Kind, Integer> applied = new ConcurrentHashMap<>();
    private final List<Contender> contenders = new ArrayList<>();
    private final List<Long> clockErrors = new ArrayList<>();
    private final List<String> protocolErrors = new ArrayList<>();
    private long origin;
    private volatile String lockName;

    @Test
    // the run bounds itself (every step waits with a bound) and its length is a property: a soak would
    // outlast the build's default guard of a few minutes
    @Timeout(value = 12, unit = TimeUnit.HOURS)
    @DisplayName("holders in child JVMs under random faults (kill -9, SIGSTOP, cuts of one, of the holder and of all,"
            + " server pause and restart): no two leases' claimed intervals overlap, tokens grow, the lock comes back")
    void randomFaultsNeverOverlapClaimedLeases(TestReporter report) throws Exception {
        long seed = Long.getLong(SEED_PROPERTY, ThreadLocalRandom.current().nextLong());
        String minutes = System.getProperty(MINUTES_PROPERTY);
        Duration run = minutes == null ? DEFAULT_RUN : Duration.ofMillis((long) (Double.parseDouble(minutes) * 60_000));
        report.publishEntry("seed", Long.toString(seed));
        String replay = "seed " + seed + " (replay with -D" + SEED_PROPERTY + "=" + seed + ")";
        LOG.info("randomized faults on {}: {}, {} of faults", contract().getClass().getSimpleName(), replay, run);
        long started = System.nanoTime();
        try {
            run(seed, run, report);
        } catch (AssertionError | RuntimeException e) {
            LOG.error("randomized faults on {} failed: {}", contract().getClass().getSimpleName(), replay);
            throw new AssertionError("randomized faults, " + replay + ": " + e.getMessage(), e);
        }
        String summary = replay + ", " + Duration.ofNanos(System.nanoTime() - started).toSeconds() + " s, faults "
                + applied + ", " + claims.leases().size() + " grants, clock errors (µs) "
                + clockErrors.stream().map(e -> Long.toString(e / 1000)).toList() + ", no violation";
        report.publishEntry("randomized faults", summary);
        LOG.info("randomized faults on {}: {}", contract().getClass().getSimpleName(), summary);
    }

    private void run(long seed, Duration run, TestReporter report) throws Exception {
        String name = name();
        lockName = name;
        Random random = new Random(seed);
        origin = History.now();
        List<Future<Contender>> starting = new ArrayList<>();
        for (int i = 0; i < CHILDREN; i++) {
            long childSeed = random.nextLong();
            int slot = i;
            starting.add(executor().submit(() -> contender(name, slot, childSeed)));
        }
        for (Future<Contender> f : starting) {
            contenders.add(await(f, ChildHolder.STARTUP_GUARD.plus(tryBound(Duration.ZERO)), "a child's start"));
        }
        Set<Kind> kinds = EnumSet.allOf(Kind.class);
        long end = History.now() + run.toNanos();
        while (History.now() - end < 0) {
            List<Kind> open = new ArrayList<>(kinds);
            Kind kind = open.get(random.nextInt(open.size()));
            if (!inject(kind, name, random)) {
                kinds.remove(kind); // the server cannot be paused: said in the report
                report.publishEntry("skipped", kind + ": " + contract().server().getClass().getName() + " cannot do it");
                continue;
            }
            applied.merge(kind, 1, Integer::sum);
            Thread.sleep((long) (random.nextDouble() * lease().toMillis() / 2)); // calm between faults
        }
        for (Contender c : contenders) {
            ChildHolder.Reply r = c.child.child().request("stop-contending", tryBound(timeout()));
            if (!r.kind().equals("stopped")) {
                throw c.child.child().failure("the child did not stop contending: " + r);
            }
        }
        check(name);
    }

    private void check(String name) {
        List<LeaseClaimsChecker.Interval> intervals = LeaseClaimsChecker.intervals(claims);
        List<String> violations = new ArrayList<>(LeaseClaimsChecker.violations(intervals, origin));
        synchronized (protocolErrors) {
            violations.addAll(protocolErrors);
        }
        violations.addAll(LeaseClaimsChecker.availability(intervals, name, faults, origin));
        if (intervals.stream().noneMatch(i -> i.end() - i.start() > 0)) {
            violations.add("no lease claimed any validity: nothing was tested");
        }
        if (!violations.isEmpty()) {
            StringBuilder b = new StringBuilder(violations.size() + " violation(s) in " + intervals.size() + " grants of '"
                    + name + "' under faults " + applied + ":\n  " + String.join("\n  ", violations));
            b.append("\nthe record (ms from the start; child times on the test's clock, errors ").append(clockErrors)
                    .append(" ns):\n").append(LeaseClaimsChecker.describe(claims, origin));
            throw new AssertionError(b.toString());
        }
    }

    /** Injects one fault of {@code kind} and waits until the lock is granted again; false if the server cannot do it. */
    private boolean inject(Kind kind, String name, Random random) throws Exception {
        Contender holder = holder(random);
        boolean held = !claims.open(holder.actor).isEmpty();
        // a fault that does not stop the holder lets it keep the lock for up to its holding time
        Duration missed = failoverBound().plus(maxHold());
        long at = History.now();
        long from = at;
        Duration bound;
        switch (kind) {
            case KILL_HOLDER -> {
                note(at, "kill -9 of " + holder.actor);
                holder.child.child().kill();
                holder.goneAt = at;
                claims.holderGone(holder.actor, at);
                bound = held ? failoverBound() : missed;
            }
            case PAUSE_HOLDER -> {
                note(at, "SIGSTOP of " + holder.actor);
                holder.child.child().pause();
                sleep(lease().plus(fraction(random, lease().dividedBy(2))));
                holder.child.child().resume();
                note(History.now(), "SIGCONT of " + holder.actor);
                bound = held ? failoverBound() : missed;
            }
            case CUT_ONE, CUT_HOLDER -> {
                Contender cut = kind == Kind.CUT_HOLDER ? holder : contenders.get(random.nextInt(contenders.size()));
                Duration d = kind == Kind.CUT_HOLDER ? lease().dividedBy(2).plus(fraction(random, lease()))
                        : lease().dividedBy(4).plus(fraction(random, lease().multipliedBy(5).dividedBy(4)));
                note(at, "network cut of " + cut.actor + (cut == holder && held ? " (the holder)" : "") + " for "
                        + d.toMillis() + " ms");
                cut.child.cut();
                sleep(d);
                cut.child.restore();
                note(History.now(), "network of " + cut.actor + " restored");
                // a cut shorter than the lease may leave the holder its lease
                bound = cut == holder && held && d.compareTo(lease()) > 0 ? failoverBound() : missed;
            }
            case CUT_ALL -> {
                Duration d = lease().dividedBy(2).plus(fraction(random, lease()));
                note(at, "network cut of every child for " + d.toMillis() + " ms");
                contenders.forEach(c -> c.child.cut());
                sleep(d);
                contenders.forEach(c -> c.child.restore());
                from = History.now();
                note(from, "network of every child restored");
                bound = missed;
            }
            case SERVER_PAUSE -> {
                Duration d = lease().dividedBy(4).plus(fraction(random, lease().multipliedBy(5).dividedBy(4)));
                try {
                    contract().server().pause();
                } catch (UnsupportedOperationException e) {
                    return false;
                }
                note(at, "server paused for " + d.toMillis() + " ms");
                try {
                    sleep(d);
                } finally {
                    contract().server().unpause();
                }
                from = History.now();
                note(from, "server unpaused");
                bound = missed;
            }
            case SERVER_RESTART -> {
                note(at, "server restart");
                contract().server().restart();
                from = History.now();
                note(from, "server serves again");
                bound = missed;
            }
            default -> throw new IllegalStateException(kind.toString());
        }
        faults.add(new LeaseClaimsChecker.Fault(kind + " (" + holder.actor + (held ? ", holding" : "") + ")", at, from,
                bound));
        awaitGrantAfter(name, from, bound);
        if (kind == Kind.KILL_HOLDER) {
            replace(holder, name, random.nextLong());
        }
        return true;
    }

    /** Waits until some acquire of {@code name} returned after {@code from}, or the bound and a round trip passed. */
    private void awaitGrantAfter(String name, long from, Duration bound) throws InterruptedException {
        long giveUp = from + bound.plus(tryBound(Duration.ZERO)).toNanos();
        while (History.now() - giveUp < 0) {
            boolean granted = LeaseClaimsChecker.intervals(claims).stream()
                    .anyMatch(i -> i.lock().equals(name) && i.returnedAt() - from > 0);
            if (granted) {
                return;
            }
            Thread.sleep(10);
        }
    }

    /** The child that holds the lock by the latest report, or a random one if none does. */
    private Contender holder(Random random) {
        // drawn whether needed or not, so that a replay draws the same numbers whoever holds
        Contender any = contenders.get(random.nextInt(contenders.size()));
        String actor = claims.openHolder();
        for (Contender c : contenders) {
            if (c.actor.equals(actor)) {
                return c;
            }
        }
        return any;
    }

    private void replace(Contender killed, String name, long childSeed) {
        killed.child.close(); // gives back what cut it (a proxied listener of Kafka)
        int slot = contenders.indexOf(killed);
        contenders.set(slot, contender(name, slot, childSeed));
    }

    /**
     * Starts a child behind a cut of its own, places its clock, and lets it contend for {@code name}. It is
     * named by its place among the children (what a replay repeats) and its process id.
     */
    private Contender contender(String name, int slot, long childSeed) {
        CuttableChild child = track(contract().newCuttableChild());
        String actor = "child-" + (slot + 1) + "/" + child.child().pid();
        ChildClock clock = ChildClock.of(child.child(), tryBound(Duration.ZERO));
        synchronized (clockErrors) {
            clockErrors.add(clock.error);
        }
        Contender c = new Contender(actor, child, clock);
        child.child().onEvents(c::event);
        ChildHolder.Reply r = child.child().request("contend " + childSeed + " " + maxHold().toMillis() + " "
                + checkEvery().toMillis() + " " + patientWait().toMillis() + " "
                + URLEncoder.encode(name, StandardCharsets.UTF_8), tryBound(Duration.ZERO));
        if (!r.kind().equals("contending")) {
            throw child.child().failure("the child did not start contending: " + r);
        }
        return c;
    }

    /** The longest a child holds the lock: a quarter lease, so that the lock changes hands often. */
    private Duration maxHold() {
        return lease().dividedBy(4);
    }

    /** How often a holder asks {@code remaining()}. */
    private Duration checkEvery() {
        Duration d = options().safetyMargin().dividedBy(4);
        return d.compareTo(Duration.ofMillis(10)) < 0 ? Duration.ofMillis(10) : d;
    }

    private void note(long at, String what) {
        claims.note(at, "fault", what);
        LOG.info("{} ms: {}", (at - origin) / 1_000_000, what);
    }

    private static Duration fraction(Random random, Duration d) {
        return Duration.ofNanos((long) (random.nextDouble() * d.toNanos()));
    }

    private static void sleep(Duration d) throws InterruptedException {
        Thread.sleep(d.toMillis());
    }

    /** A child JVM's clock placed on the test's: {@code parent = child - offset}, within {@code ± error} ns. */
    private record ChildClock(long offset, long error) {

        static ChildClock of(ChildHolder child, Duration bound) {
            ChildClock best = null;
            for (int i = 0; i < CLOCK_SAMPLES; i++) {
                ChildHolder.Reply r = child.request("clock", bound);
                if (!r.kind().equals("clock")) {
                    throw child.failure("the child did not tell its clock: " + r);
                }
                long c = Long.parseLong(r.argument());
                long half = (r.receivedAt() - r.sentAt() + 1) / 2;
                ChildClock sample = new ChildClock(c - (r.sentAt() + half), half);
                if (best == null || sample.error < best.error) {
                    best = sample;
                }
            }
            return best;
        }

        long toParent(long childNanos) {
            return childNanos - offset;
        }
    }

    /** One child and the leases it reported, by token. */
    private final class Contender {
        final String actor;
        final CuttableChild child;
        final ChildClock clock;
        final Map<Long, LeaseClaims.Claim> leases = new ConcurrentHashMap<>();
        /** When its process was killed (test JVM clock), or null. */
        volatile Long goneAt;

        Contender(String actor, CuttableChild child, ChildClock clock) {
            this.actor = actor;
            this.child = child;
            this.clock = clock;
        }

        /** One {@code event} line of the child, on the thread that reads its output. */
        void event(String line) {
            try {
                record(line);
            } catch (RuntimeException e) {
                synchronized (protocolErrors) {
                    protocolErrors.add(actor + " reported an event the test cannot read: '" + line + "': " + e);
                }
            }
        }

        private void record(String line) {
            String[] p = line.split(" ");
            switch (p[0]) {
                case "granted" -> {
                    long token = Long.parseLong(p[1]);
                    LeaseClaims.Claim claim = claims.granted(actor, lockName, token, t(p[2]), t(p[3]), clock.error);
                    claim.claim(t(p[4]), Long.parseLong(p[5]));
                    leases.put(token, claim);
                    Long gone = goneAt;
                    if (gone != null) {
                        // read from the pipe after the kill was recorded: it ends there all the same
                        claims.holderGone(actor, gone);
                    }
                }
                case "check" -> lease(p).claim(t(p[2]), Long.parseLong(p[3]));
                case "lost" -> lease(p).lost(t(p[2]));
                case "release" -> lease(p).releasing(t(p[2]));
                case "released" -> lease(p).released(t(p[2]));
                case "failed" -> claims.note(t(p[1]), actor, "acquire failed: " + line.split(" ", 3)[2]);
                default -> claims.note(History.now(), actor, "unknown event: " + line);
            }
        }

        private LeaseClaims.Claim lease(String[] p) {
            LeaseClaims.Claim c = leases.get(Long.parseLong(p[1]));
            if (c == null) {
                throw new IllegalStateException("no grant of token " + p[1] + " was reported before");
            }
            return c;
        }

        private long t(String childNanos) {
            return clock.toParent(Long.parseLong(childNanos));
        }
    }
}
