package io.latchkey.cli;

import io.latchkey.Holder;
import io.latchkey.LockBackendUnavailableException;
import io.latchkey.LockClient;
import io.latchkey.LockException;
import io.latchkey.LockState;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code latchkey list [PREFIX]}: the locks held now under a prefix, one line each with what
 * {@code latchkey status} tells of it, or a JSON array for scripts. Read-only.
 *
 * <p>Decisions: a page of at most {@code --limit} names ({@link LockClient#list(String, String, int)}),
 * and when the page is full a line on stderr gives the {@code --after} of the next one, so that a large
 * namespace is never read at once by surprise; each name is then read as {@code status} reads it, one
 * request each, and a name released meanwhile is left out. Nothing held is exit 0 with no line (or
 * {@code []}): an empty list is an answer, not an error, unlike {@code status} of one free name.
 */
@Command(name = "list", mixinStandardHelpOptions = true, sortOptions = false,
        customSynopsis = "latchkey list [OPTIONS] [PREFIX]",
        description = {"Print the locks held now whose names start with PREFIX (every lock without one), in name order:"
                + " name, owner, token, and how long the backend keeps each if its holder goes silent. Read-only."},
        footerHeading = "%nExamples:%n",
        footer = {"  latchkey list --uri redis://redis1:6379 report:",
            "  latchkey list --json --limit 100 --after report:m report:",
            "",
            "Exit status: 0 listed (none held is no line, or [] with --json); 69 backend unreachable;",
            "2 bad input."})
final class ListCommand implements Callable<Integer> {

    @Parameters(index = "0", arity = "0..1", paramLabel = "PREFIX", defaultValue = "",
            description = "The start of the names (default: every name).")
    String prefix;

    @Option(names = "--uri", paramLabel = "URI",
            description = "The backend, for example etcd://etcd1:2379. Default: $LATCHKEY_URI.")
    String uri;

    @Option(names = "--json", description = "Print a JSON array of objects instead of lines.")
    boolean json;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "1000",
            description = "At most N names, 1 to " + LockClient.MAX_LIST + " (default: ${DEFAULT-VALUE}).")
    int limit;

    @Option(names = "--after", paramLabel = "NAME", description = "Only names after NAME: the next page.")
    String after;

    private final PrintStream out = System.out;
    private final PrintStream err = System.err;

    @Override
    public Integer call() throws InterruptedException {
        if (limit < 1 || limit > LockClient.MAX_LIST) {
            throw new CliException(ExitCodes.USAGE, "--limit must be 1 to " + LockClient.MAX_LIST + ", got " + limit
                    + ": take a larger namespace page by page with --after");
        }
        checkName("prefix", prefix.isEmpty() ? null : prefix);
        checkName("--after", after);
        List<LockState> held = new ArrayList<>();
        List<String> names;
        try (LockClient client = Backends.connect(uri)) {
            names = client.list(prefix, after, limit);
            for (String name : names) {
                LockState state = client.lock(name).inspect();
                if (state.isHeld()) {
                    held.add(state);
                }
            }
        } catch (IllegalArgumentException e) {
            throw new CliException(ExitCodes.USAGE, e.getMessage());
        } catch (LockBackendUnavailableException e) {
            throw new CliException(ExitCodes.BACKEND_UNAVAILABLE, e.getMessage());
        } catch (UnsupportedOperationException | LockException e) {
            throw new CliException(ExitCodes.FAILURE, e.getMessage());
        }
        if (json) {
            out.println(held.stream().map(ListCommand::json).collect(Collectors.joining(",", "[", "]")));
        } else {
            held.forEach(s -> out.println(s.name() + ": held by " + HolderLines.holder(s, "token")));
        }
        if (names.size() == limit) {
            err.println("latchkey: " + limit + " names listed, the limit; the next page: --after '"
                    + names.get(names.size() - 1) + "'");
        }
        return ExitCodes.OK;
    }

    private static void checkName(String what, String value) {
        if (value != null) {
            try {
                LockClient.checkName(value);
            } catch (IllegalArgumentException e) {
                throw new CliException(ExitCodes.USAGE, "bad " + what + ": " + e.getMessage());
            }
        }
    }

    /** One held lock as a JSON object; a number or time the backend does not tell is left out. */
    static String json(LockState s) {
        Holder h = s.holder().orElseThrow();
        StringBuilder b = new StringBuilder("{\"name\":").append(quote(s.name()));
        if (!h.equals(Holder.UNKNOWN)) {
            b.append(",\"owner\":").append(quote(h.owner())).append(",\"clientStarted\":")
                    .append(quote(h.clientStarted().toString())).append(",\"thread\":").append(quote(h.thread()));
        }
        s.token().ifPresent(t -> b.append(",\"token\":").append(t));
        s.since().ifPresent(t -> b.append(",\"since\":").append(quote(t.at().toString())).append(",\"sinceSource\":")
                .append(quote(t.source().name())));
        s.expiresIn().ifPresent(d -> b.append(",\"expiresInMillis\":").append(d.toMillis()));
        s.waiters().ifPresent(n -> b.append(",\"waiters\":").append(n));
        return b.append('}').toString();
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
