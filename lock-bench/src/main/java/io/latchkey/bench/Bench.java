package io.latchkey.bench;

import io.latchkey.spi.Durations;
import io.latchkey.testkit.LockServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Latchkey against the raw clients on the same server in the same run: for every backend selected,
 * one server (the kit's container fixture, or {@code --uri}), a warm-up round of the latency scenarios
 * ({@link Scenarios#WARMED}) whose results are dropped, so that no variant's first round is timed while
 * the JIT still compiles its code, then rounds in which every scenario runs for every variant, the
 * variants' order reversed every other round. The result is a Markdown table
 * per backend: the median over rounds of each measure, and the ratio Latchkey / raw client per round,
 * its median and min–max.
 *
 * <p>Options (defaults in brackets): {@code --backends redis,zookeeper,etcd,kafka,postgresql,mariadb [all]},
 * {@code --scenarios uncontended,contended,handover,crash,connect,names,readwrite,held [all]}, {@code --rounds N [3]},
 * {@code --seconds S} per timed scenario and variant [3], {@code --names N} for the distinct-names
 * scenario [1000], {@code --held N} locks one client holds at once in the held scenario, Latchkey
 * only [1000, at most 1000 on Kafka], {@code --lease 6s} and {@code --timeout 2s} for every variant,
 * {@code --hold 50ms} a holder keeps the lock in the hand-over scenario [50ms, Kafka 1s],
 * {@code --uri backend=uri} to use a running server instead of a container (repeatable),
 * {@code --out file} for a copy of the tables [target/bench-results.md].
 *
 * <p>A benchmark, not a test: it is never part of {@code verify}; run it with {@code -Pbench}.
 */
public final class Bench {

    private Bench() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> uris = new LinkedHashMap<>();
        List<Backend> backends = Arrays.asList(Backend.values());
        List<String> scenarios = Scenarios.ALL;
        int rounds = 3;
        int names = 1000;
        int held = 1000;
        Duration seconds = Duration.ofSeconds(3);
        Duration lease = Duration.ofSeconds(6);
        Duration timeout = Duration.ofSeconds(2);
        Duration hold = null;
        Path out = Paths.get("target", "bench-results.md");
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("help") || a.equals("--help")) {
                System.out.println("options: see the javadoc of " + Bench.class.getName());
                return;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("option " + a + " needs a value");
            }
            String value = args[++i];
            switch (a) {
                case "--backends":
                    backends = new ArrayList<>();
                    for (String b : value.split(",")) {
                        backends.add(Backend.of(b));
                    }
                    break;
                case "--scenarios":
                    scenarios = List.of(value.split(","));
                    for (String s : scenarios) {
                        if (!Scenarios.ALL.contains(s)) {
                            throw new IllegalArgumentException("unknown scenario '" + s + "': use " + String.join(",", Scenarios.ALL));
                        }
                    }
                    break;
                case "--rounds":
                    rounds = Integer.parseInt(value);
                    break;
                case "--names":
                    names = Integer.parseInt(value);
                    break;
                case "--held":
                    held = Integer.parseInt(value);
                    if (held < 1) {
                        throw new IllegalArgumentException("--held takes a positive count, not " + value);
                    }
                    break;
                case "--seconds":
                    seconds = Duration.ofMillis(Math.round(Double.parseDouble(value) * 1000));
                    break;
                case "--lease":
                    lease = duration(value);
                    break;
                case "--timeout":
                    timeout = duration(value);
                    break;
                case "--hold":
                    hold = duration(value);
                    break;
                case "--uri":
                    int eq = value.indexOf('=');
                    if (eq < 0) {
                        throw new IllegalArgumentException("--uri takes backend=uri, not '" + value + "'");
                    }
                    uris.put(Backend.of(value.substring(0, eq)).key(), value.substring(eq + 1));
                    break;
                case "--out":
                    out = Paths.get(value);
                    break;
                default:
                    throw new IllegalArgumentException("unknown option '" + a + "'; see the javadoc of " + Bench.class.getName());
            }
        }
        StringBuilder report = new StringBuilder();
        report.append(String.format(Locale.ROOT, "Latchkey / raw client, %d rounds, %s per timed scenario, lease %s, timeout %s;"
                        + " %d cores, max heap %d MB, Java %s, %s%n%n", rounds, Durations.format(seconds), Durations.format(lease),
                Durations.format(timeout),
                Runtime.getRuntime().availableProcessors(), Runtime.getRuntime().maxMemory() >> 20,
                System.getProperty("java.version"), Instant.now()));
        for (Backend b : backends) {
            long started = System.nanoTime();
            String given = uris.get(b.key());
            LockServer server = given == null ? start(b) : null;
            try {
                String uri = given != null ? given : server.uri(server.endpoints());
                Target target = new Target(uri, lease, timeout);
                Scenarios sc = new Scenarios(b, target, seconds, hold != null ? hold : b.defaultHold(), names, held);
                Results results = new Results(b.variants());
                for (String s : scenarios) {
                    if (Scenarios.WARMED.contains(s)) {
                        for (Backend.Variant v : b.variants()) {
                            progress(b.key() + " warm-up round (not counted) " + s + " " + v.label());
                            sc.run(s, v, -1);
                        }
                    }
                }
                for (int r = 0; r < rounds; r++) {
                    List<Backend.Variant> order = new ArrayList<>(b.variants());
                    if (r % 2 == 1) {
                        java.util.Collections.reverse(order);
                    }
                    for (String s : scenarios) {
                        for (Backend.Variant v : order) {
                            progress(b.key() + " round " + (r + 1) + "/" + rounds + " " + s + " " + v.label());
                            results.add(r, v.label(), sc.run(s, v, r));
                        }
                    }
                }
                String table = results.markdown(b.key() + " (" + (given != null ? "--uri" : "the kit's container")
                        + "), " + (scenarios.contains("names") ? names + " distinct names, " : "")
                        + (scenarios.contains("held") ? sc.heldCount() + " held locks (Latchkey only"
                                + (sc.heldCount() < held ? ", capped at " + HeldLocks.KAFKA_CAP + " on Kafka" : "") + "), " : "")
                        + "run time "
                        + Durations.format(Duration.ofSeconds((System.nanoTime() - started) / 1_000_000_000L)));
                System.out.println(table);
                report.append(table).append('\n');
                write(out, report.toString());
            } finally {
                if (server != null) {
                    server.close();
                }
            }
        }
        System.out.println("written to " + out.toAbsolutePath().normalize().getFileName());
        // client libraries leave non-daemon threads behind at times; the run is over
        System.exit(0);
    }

    /** The kit's fixture; a second try when the first did not come up in time, as happens on a loaded machine. */
    private static LockServer start(Backend b) {
        try {
            return b.startServer();
        } catch (RuntimeException e) {
            progress(b.key() + ": the server did not start (" + e.getMessage() + "); trying once more");
            return b.startServer();
        }
    }

    private static void write(Path out, String text) throws IOException {
        if (out.getParent() != null) {
            Files.createDirectories(out.getParent());
        }
        Files.writeString(out, text, StandardCharsets.UTF_8);
    }

    private static void progress(String what) {
        System.err.println("[bench " + Instant.now() + "] " + what);
    }

    /** {@code 500ms}, {@code 6s}, {@code 2m}. */
    static Duration duration(String s) {
        String v = s.trim().toLowerCase(Locale.ROOT);
        if (v.endsWith("ms")) {
            return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
        }
        if (v.endsWith("s")) {
            return Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 1000));
        }
        if (v.endsWith("m")) {
            return Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
        }
        throw new IllegalArgumentException("not a duration: '" + s + "' (write 500ms, 6s or 2m)");
    }
}
