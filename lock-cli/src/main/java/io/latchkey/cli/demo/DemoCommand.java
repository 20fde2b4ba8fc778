package io.latchkey.cli.demo;

import io.latchkey.LockClient;
import io.latchkey.LockLostException;
import io.latchkey.LockState;
import io.latchkey.cli.Backends;
import io.latchkey.cli.CliException;
import io.latchkey.cli.DurationConverter;
import io.latchkey.cli.ExitCodes;
import io.latchkey.cli.Main;
import io.latchkey.cli.server.EmbeddedZooKeeper;
import io.latchkey.spi.LockUri;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code latchkey demo}: the midnight cron on several nodes, with the faults Latchkey exists for.
 *
 * <p>It starts an embedded ZooKeeper (unless {@code --uri} names a real backend), a fenced report store,
 * and {@code --workers} worker processes ({@link DemoWorker}) racing for {@code report:nightly}. Then it
 * kills the holder with -9, stops a holder with SIGSTOP past its lease and wakes it, and cuts the
 * network between the workers and ZooKeeper for longer than the lease (on the embedded server only:
 * the demo cannot pause a server it does not run). It narrates each step and ends with a summary
 * computed from the recorded history, and exits 0 only if no two valid leases overlapped and tokens
 * grew with every grant.
 *
 * <p>One instance per run; reader threads narrate, the main thread injects the faults.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Watch Latchkey keep four cron workers to one at a time through kill -9, SIGSTOP and a network cut.",
            "Needs nothing but a JDK: the ZooKeeper server runs inside this process unless --uri is given."})
public final class DemoCommand implements Callable<Integer> {

    static final String LOCK = "report:nightly";
    static final Duration EMBEDDED_LEASE = Duration.ofSeconds(3);
    static final Duration MIN_DURATION = Duration.ofSeconds(20);

    @Option(names = "--uri", paramLabel = "URI",
            description = "Run on this backend instead of the embedded ZooKeeper (its lease option sets the pace).")
    String uri;

    @Option(names = "--workers", paramLabel = "N", defaultValue = "4", description = "How many workers race (default: ${DEFAULT-VALUE}).")
    int workerCount;

    @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "60s", converter = DurationConverter.class,
            description = "How long the demo runs, at least 20s (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    private final History history = new History();
    private final Map<String, Process> workers = new ConcurrentHashMap<>();
    private final Map<String, Long> lastUnavailable = new ConcurrentHashMap<>();
    private final List<String> failovers = new ArrayList<>();
    private final Object view = new Object();
    private Terminal term;
    private long start;
    private Duration lease;
    private boolean verbose;
    private String backend;
    private String workerUri;
    private int storePort;
    private int spawned;
    private long nextPlain; // when a plain stream gets the status line next
    // the holder as the narration knows it: worker, token, claimed validity deadline (guarded by view)
    private String holder;
    private long holderToken;
    private long holderValidUntil;

    @Override
    public Integer call() throws Exception {
        if (duration.compareTo(MIN_DURATION) < 0) {
            throw new CliException(ExitCodes.USAGE, "--duration " + DurationConverter.format(duration)
                    + " is too short for three faults and their recovery; give at least 20s");
        }
        if (workerCount < 2 || workerCount > 16) {
            throw new CliException(ExitCodes.USAGE, "--workers must be between 2 and 16: " + workerCount);
        }
        verbose = Main.verboseRequested(spec.commandLine().getParseResult().originalArgs().toArray(String[]::new));
        start = System.nanoTime();
        term = new Terminal(System.out, Terminal.isTerminal(), start);
        EmbeddedZooKeeper zk = null;
        CuttableProxy proxy = null;
        try (FencedStore store = new FencedStore()) {
            storePort = store.port();
            if (uri == null) {
                zk = EmbeddedZooKeeper.start(0);
                proxy = new CuttableProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(), zk.port()));
                workerUri = "zookeeper://127.0.0.1:" + proxy.port() + "/latchkey?lease="
                        + DurationConverter.format(EMBEDDED_LEASE) + "&timeout=1s";
                lease = EMBEDDED_LEASE;
                backend = "an embedded ZooKeeper " + org.apache.zookeeper.Version.getFullVersion().replaceFirst("-.*", "")
                        + " on " + zk.connectString();
            } else {
                try (LockClient probe = Backends.connect(uri)) {
                    lease = probe.options().lease();
                }
                workerUri = uri;
                backend = LockUri.redact(uri);
            }
            EmbeddedZooKeeper server = zk;
            CuttableProxy cut = proxy;
            Thread cleanup = new Thread(() -> stopAll(cut, server), "latchkey-demo-stop");
            Runtime.getRuntime().addShutdownHook(cleanup);
            intro();
            play(proxy);
            stopAll(proxy, zk);
            Runtime.getRuntime().removeShutdownHook(cleanup);
            return summary(store);
        } finally {
            stopAll(proxy, zk);
        }
    }

    private void intro() {
        term.plain(Terminal.BOLD, "Latchkey demo: the midnight cron on " + workerCount + " nodes");
        term.plain(null, "  backend     " + backend);
        term.plain(null, "  lock        " + LOCK + ", lease " + DurationConverter.format(lease)
                + " (how long a silent holder keeps it: the failover bound)");
        term.plain(null, "  resource    a report store that keeps the highest fencing token it saw and refuses lower ones");
        term.plain(null, "  workers     " + workerCount + " processes; the holder writes every 250 ms, checking its lease"
                + " before each write, and lets go after about 4 s: longer than the lease, so renewals keep it");
        term.plain(null, "");
    }

    private void play(CuttableProxy proxy) throws InterruptedException {
        for (int i = 0; i < workerCount; i++) {
            spawn();
        }
        long end = start + duration.toNanos();
        Duration bound = lease.multipliedBy(3).plusSeconds(15);
        pause(start + duration.toNanos() / 5);
        killHolder(bound);
        pause(start + duration.toNanos() * 45 / 100);
        stopHolder(bound);
        pause(start + duration.toNanos() * 70 / 100);
        if (proxy != null) {
            cutNetwork(proxy, bound);
        } else {
            term.say(Terminal.YELLOW, "fault 3/3 skipped: the demo can pause only the network to its own embedded"
                    + " ZooKeeper, not a backend given with --uri");
        }
        // let the last recovery show before the end, even if the faults ran late on a slow machine
        pause(Math.max(end - System.nanoTime() > 0 ? end : System.nanoTime(), System.nanoTime() + 2_000_000_000L));
        term.endStatus();
    }

    private void killHolder(Duration bound) throws InterruptedException {
        String victim = awaitHolder(bound);
        if (victim == null) {
            return;
        }
        Process p = workers.get(victim);
        long t = System.nanoTime();
        p.destroyForcibly();
        history.fault("kill -9", victim, t, t);
        showStatus();
        term.say(Terminal.RED, "fault 1/3: kill -9 " + victim + " (pid " + p.pid() + "), the holder. It cannot release:"
                + " the lock is handed on once its lease of " + DurationConverter.format(lease) + " runs out");
        Event next = awaitGrant(t, victim, bound);
        if (next != null) {
            failover("kill -9 of " + victim, next, t);
            showStatus();
        }
        spawn();
    }

    /**
     * What {@code latchkey status} prints now, read as it reads it ({@link LockClient#lock(String)}'s
     * {@code inspect()}) through a client of the demo's own: the backend's record, not the workers' story.
     */
    private void showStatus() throws InterruptedException {
        String said;
        try (LockClient client = Backends.connect(workerUri)) {
            LockState s = client.lock(LOCK).inspect();
            said = s.isHeld() ? "held by " + s.holder().orElseThrow().owner()
                    + (s.token().isPresent() ? " token " + s.token().getAsLong() : "") : "free";
        } catch (RuntimeException e) {
            said = "cannot tell: " + e.getMessage();
        }
        term.say(null, "latchkey status " + LOCK + ": " + said);
    }

    private void stopHolder(Duration bound) throws InterruptedException {
        String victim = awaitFreshHolder(bound);
        if (victim == null) {
            return;
        }
        Process p = workers.get(victim);
        long t = System.nanoTime();
        signal("STOP", p.pid());
        term.say(Terminal.RED, "fault 2/3: SIGSTOP " + victim + " (pid " + p.pid() + "), the holder, as a long GC pause"
                + " would: it keeps its lease in memory, but the lease runs out on the backend");
        Event next = awaitGrant(t, victim, bound);
        if (next != null) {
            failover("SIGSTOP of " + victim, next, t);
            // wake it only once the new holder wrote: its stale write then meets a higher token
            awaitTrue(bound, () -> history.wrote(next.worker(), next.token()));
        }
        long stoppedFor = Math.max(lease.toNanos() + 1_000_000_000L, System.nanoTime() - t);
        pause(t + stoppedFor);
        signal("CONT", p.pid());
        history.fault("SIGSTOP", victim, t, System.nanoTime());
        term.say(Terminal.RED, "SIGCONT " + victim + " after " + seconds(System.nanoTime() - t) + ", longer than its lease");
        awaitTrue(bound, () -> history.events().stream().anyMatch(e -> e.worker().equals(victim) && e.nanos() - t > 0
                && (e.kind().equals("STALE") || e.kind().equals("LOST") || e.kind().equals("CLOSED"))));
    }

    private void cutNetwork(CuttableProxy proxy, Duration bound) throws InterruptedException {
        String victim = awaitFreshHolder(bound);
        long t = System.nanoTime();
        Duration silence = lease.plusMillis(1500);
        proxy.cut();
        term.say(Terminal.RED, "fault 3/3: the network to ZooKeeper goes silent for " + DurationConverter.format(silence)
                + " (a proxy stops passing bytes). The holder " + (victim == null ? "" : victim + " ")
                + "must stop within its lease, on its own clock; nobody can take the lock until the network is back");
        pause(t + silence.toNanos());
        proxy.restore();
        long restored = System.nanoTime();
        history.fault("network cut", null, t, restored);
        term.say(Terminal.RED, "the network is back after " + seconds(restored - t) + "; the expired sessions are"
                + " replaced and the race goes on");
        Event next = awaitGrant(t, null, bound);
        if (next != null) {
            failover("network cut", next, t);
            term.say(null, "  (" + seconds(next.nanos() - restored) + " after the network came back)");
        }
    }

    private void failover(String fault, Event next, long faultNanos) {
        String line = String.format("%-24s %s took over with token %d, %s after the fault", fault, next.worker(),
                next.token(), seconds(next.nanos() - faultNanos));
        failovers.add(line);
        term.say(Terminal.GREEN, "failover: " + next.worker() + " took over " + seconds(next.nanos() - faultNanos)
                + " after the " + fault.replaceFirst(" of .*", "") + " (lease " + DurationConverter.format(lease) + ")");
    }

    private int summary(FencedStore store) {
        List<History.Interval[]> overlaps = history.overlaps();
        List<History.Interval> spurious = history.spuriousLosses();
        int leases = history.leases().size();
        term.plain(null, "");
        term.plain(Terminal.BOLD, "Summary: " + LOCK + " on " + backend + ", " + spawned + " worker processes, "
                + seconds(System.nanoTime() - start));
        row("grants", history.count("GRANT"));
        row("hand-overs", history.handOvers());
        row("failovers", failovers.size());
        failovers.forEach(f -> term.plain(null, "    " + f));
        row("writes accepted", store.accepted());
        row("stale writes refused", store.refused());
        term.plain(null, String.format("  %-28s %s", "tokens increase with grants", history.tokensIncrease() ? "yes" : "NO"));
        term.plain(overlaps.isEmpty() ? Terminal.GREEN : Terminal.RED, String.format("  %-28s %d   (checked over %d leases,"
                + " each from its grant to the earliest of lost(), its release and the latest validity deadline its"
                + " library claimed)", "overlapping valid leases", overlaps.size(), leases));
        for (History.Interval[] o : overlaps) {
            term.plain(Terminal.RED, "    " + describe(o[0]) + " overlaps " + describe(o[1]));
        }
        // not a breach of mutual exclusion, so not a failure of the demo: shown apart, so that it is never read as one
        term.plain(spurious.isEmpty() ? null : Terminal.YELLOW, String.format("  %-28s %d   (leases lost while no fault"
                + " was active and nobody else held the lock)", "spurious losses", spurious.size()));
        for (History.Interval l : spurious) {
            term.plain(Terminal.YELLOW, "    " + describe(l));
        }
        return overlaps.isEmpty() && history.tokensIncrease() ? ExitCodes.OK : ExitCodes.FAILURE;
    }

    private String describe(History.Interval l) {
        return l.worker() + " token " + l.token() + " from " + seconds(l.start() - start) + " to " + seconds(l.end() - start)
                + switch (l.endedBy()) {
                    case LOST -> " (lost() completed)";
                    case RELEASE -> " (released)";
                    case DEADLINE -> " (its claimed validity deadline)";
                };
    }

    private void row(String what, long n) {
        term.plain(null, String.format("  %-28s %d", what, n));
    }

    private void spawn() {
        String name = "worker-" + (++spawned);
        List<String> command = List.of(ProcessHandle.current().info().command().orElse("java"),
                // small, quick JVMs: four of them share two cores with the server
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m",
                "-cp", System.getProperty("java.class.path"), DemoWorker.class.getName(),
                // the worker's name as its owner, so that status names it
                workerUri.contains("owner=") ? workerUri : workerUri + (workerUri.contains("?") ? "&" : "?") + "owner=" + name,
                LOCK, Integer.toString(storePort), name);
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectError(verbose ? ProcessBuilder.Redirect.INHERIT : ProcessBuilder.Redirect.DISCARD)
                .redirectInput(ProcessBuilder.Redirect.PIPE);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the demo worker " + name + ": " + e.getMessage(), e);
        }
        workers.put(name, p);
        Thread reader = new Thread(() -> read(name, p), "latchkey-demo-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    private void read(String name, Process p) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                Event e = Event.parse(line);
                if (e != null) {
                    history.add(e);
                    narrate(e, p);
                }
            }
        } catch (IOException e) {
            // the worker is gone
        }
    }

    private void narrate(Event e, Process p) {
        String w = e.worker();
        switch (e.kind()) {
            case "READY" -> term.say(null, w + " started (pid " + e.value() + ") and races for " + LOCK);
            case "GRANT" -> {
                String before;
                synchronized (view) {
                    before = holder;
                    holder = w;
                    holderToken = e.token();
                    holderValidUntil = e.value();
                }
                term.say(Terminal.GREEN, w + " holds " + LOCK + ", fencing token " + e.token() + ", valid "
                        + seconds(e.value() - e.nanos()) + (before != null && !before.equals(w) ? " (hand-over from " + before + ")" : ""));
            }
            case "VALID" -> {
                synchronized (view) {
                    if (w.equals(holder) && e.token() == holderToken) {
                        holderValidUntil = e.value();
                    }
                }
            }
            case "RELEASE" -> {
                clearHolder(w, e.token());
                term.say(null, w + " is done and releases token " + e.token());
            }
            case "LOST" -> {
                clearHolder(w, e.token());
                term.say(Terminal.YELLOW, w + " finds its lease no longer valid (its own clock says so) and stops"
                        + " writing, token " + e.token());
            }
            case "LOSS" -> term.say(Terminal.YELLOW, w + "'s library signals the loss of token " + e.token() + ": "
                    + (e.value() == LockLostException.Reason.EXPIRED.ordinal()
                            ? "no confirmation came before its validity deadline" : "the backend may have handed the lock on"));
            case "STALE" -> {
                clearHolder(w, e.token());
                term.say(Terminal.YELLOW, w + " wakes up after " + seconds(e.value()) + " stopped: its lease reads invalid."
                        + " It sends the write it was about to make anyway, as a process paused between its check and"
                        + " its write would, with token " + e.token());
            }
            case "WRITE_REFUSED" -> term.say(Terminal.RED, "the report store refuses " + w + "'s write with token "
                    + e.token() + ": it has already accepted token " + e.value());
            case "UNAVAILABLE" -> {
                Long last = lastUnavailable.put(w, e.nanos());
                if (last == null || e.nanos() - last > 5_000_000_000L) {
                    term.say(Terminal.YELLOW, w + " cannot reach the backend; it keeps trying");
                }
            }
            default -> {
            }
        }
    }

    private void clearHolder(String w, long token) {
        synchronized (view) {
            if (w.equals(holder) && token == holderToken) {
                holder = null;
            }
        }
    }

    /** Waits until {@code deadline}, redrawing the status line, and printing it every 5 s on a plain stream. */
    private void pause(long deadline) throws InterruptedException {
        while (System.nanoTime() - deadline < 0) {
            long now = System.nanoTime();
            boolean force = now - nextPlain >= 0;
            if (force) {
                nextPlain = now + 5_000_000_000L;
            }
            term.status(status(now), force);
            Thread.sleep(Math.max(1, Math.min(200, (deadline - now) / 1_000_000))); // the view's refresh tick
        }
    }

    private String status(long now) {
        long elapsed = now - start;
        int width = 20;
        int done = (int) Math.min(width, elapsed * width / duration.toNanos());
        String bar = "#".repeat(done) + ".".repeat(width - done);
        String who;
        synchronized (view) {
            long left = holderValidUntil - now;
            who = holder == null ? "nobody holds it" : "holder " + holder + ", token " + holderToken + ", valid "
                    + (left > 0 ? seconds(left) : "no longer");
        }
        return String.format("%3ds/%ds [%s] %s | grants %d, writes %d, refused %d", elapsed / 1_000_000_000L,
                duration.toSeconds(), bar, who, history.count("GRANT"), history.count("WRITE_OK"),
                history.count("WRITE_REFUSED"));
    }

    private String awaitHolder(Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (System.nanoTime() - deadline < 0) {
            synchronized (view) {
                if (holder != null && holderValidUntil - System.nanoTime() > lease.toNanos() / 3) {
                    return holder;
                }
            }
            pause(System.nanoTime() + 50_000_000L);
        }
        term.say(Terminal.YELLOW, "nobody took the lock within " + DurationConverter.format(bound) + "; skipping this fault");
        return null;
    }

    /** The holder of a grant made after now, once it wrote: a fault then lands in the middle of its job. */
    private String awaitFreshHolder(Duration bound) throws InterruptedException {
        Event grant = awaitGrant(System.nanoTime(), null, bound);
        if (grant == null) {
            return null;
        }
        awaitTrue(bound, () -> history.wrote(grant.worker(), grant.token()));
        return grant.worker();
    }

    private Event awaitGrant(long after, String except, Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (System.nanoTime() - deadline < 0) {
            Event e = history.grantAfter(after, except);
            if (e != null) {
                return e;
            }
            pause(System.nanoTime() + 50_000_000L);
        }
        term.say(Terminal.RED, "nobody took over within " + DurationConverter.format(bound));
        return null;
    }

    private void awaitTrue(Duration bound, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean() && System.nanoTime() - deadline < 0) {
            pause(System.nanoTime() + 50_000_000L);
        }
    }

    private void stopAll(CuttableProxy proxy, EmbeddedZooKeeper zk) {
        for (Process p : workers.values()) {
            if (p.isAlive()) {
                signal("CONT", p.pid()); // a stopped process would not act on SIGTERM
                p.destroyForcibly();
            }
        }
        for (Process p : workers.values()) {
            try {
                p.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (proxy != null) {
            proxy.close();
        }
        if (zk != null) {
            zk.close();
        }
    }

    private static void signal(String name, long pid) {
        try {
            new ProcessBuilder("kill", "-s", name, Long.toString(pid)).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot send SIG" + name + " to a demo worker: the demo needs the kill command", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String seconds(long nanos) {
        return String.format("%.1fs", nanos / 1e9);
    }
}
