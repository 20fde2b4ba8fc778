package io.latchkey.cli;

import io.latchkey.cli.demo.DemoCommand;
import io.latchkey.cli.server.ServerCommand;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * The {@code latchkey} command: {@code run}, {@code elect}, {@code demo}, {@code server}, plus picocli's {@code help}
 * and {@code generate-completion}.
 *
 * <p>Logging goes to stderr through slf4j-simple, configured here from system properties before any
 * logger exists: quiet (errors only) by default, debug for Latchkey with {@code --verbose}. The command
 * line's own messages are single lines on stderr that start with {@code latchkey:}.
 */
@Command(name = "latchkey", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Run a command under a distributed lock, or while leading an election, on Redis, ZooKeeper, etcd,"
                + " Kafka, PostgreSQL or MariaDB/MySQL, see who holds a lock or leads, and watch Latchkey work.",
        subcommands = {RunCommand.class, ElectCommand.class, StatusCommand.class, ListCommand.class, ReleaseCommand.class,
                LeaderCommand.class, DemoCommand.class,
                ServerCommand.class, CommandLine.HelpCommand.class, AutoComplete.GenerateCompletion.class},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {
            "0:success; with run and elect, the command's own status",
            "2:bad input: options, duration, URI, unknown backend, missing -- or command",
            "1:the backend cannot do what was asked; release: not confirmed",
            "3:status, release: the lock is free; leader: no candidate leads",
            "69:the backend could not be reached",
            "70:run: the lease was lost and the command was stopped",
            "75:run: the lock is held by someone else (--conflict-exit-code)",
            "126:run, elect: the command cannot be executed",
            "127:run, elect: the command was not found",
            "128+N:the command, or latchkey while waiting or standing by, ended by signal N"})
public final class Main {

    /** Debug logging for Latchkey, info for the libraries; inherited by every subcommand. */
    @Option(names = "--verbose", scope = ScopeType.INHERIT, description = "Log what Latchkey does, on stderr.")
    boolean verbose;

    /** Runs {@code latchkey} and exits with its status. */
    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs {@code latchkey} and returns its status, without exiting. */
    public static int run(String[] args) {
        configureLogging(verboseRequested(args));
        CommandLine cli = commandLine();
        try {
            return cli.execute(args);
        } catch (Error e) {
            // picocli hands only exceptions to the handler; a missing class must not end in silence
            System.err.println("latchkey: unexpected error: " + e);
            return ExitCodes.FAILURE;
        }
    }

    static CommandLine commandLine() {
        CommandLine cli = new CommandLine(new Main());
        cli.setExecutionExceptionHandler((e, line, parseResult) -> {
            if (e instanceof CliException c) {
                line.getErr().println("latchkey: " + c.getMessage());
                return c.exitCode();
            }
            line.getErr().println("latchkey: unexpected error: " + e);
            if (verboseRequested(parseResult.originalArgs().toArray(String[]::new))) {
                e.printStackTrace(line.getErr());
            }
            return ExitCodes.FAILURE;
        });
        // one line for a usage error, with the hint to the help: the full usage drowns the mistake
        cli.setParameterExceptionHandler((e, args) -> {
            PrintWriter err = e.getCommandLine().getErr();
            err.println("latchkey: " + e.getMessage());
            String name = e.getCommandLine().getCommandSpec().qualifiedName();
            err.println("see '" + name.replaceFirst("^latchkey", "latchkey help").trim() + "' or '" + name + " --help'");
            return ExitCodes.USAGE;
        });
        return cli;
    }

    /**
     * Whether {@code --verbose} is among the options, looked for before picocli parses: the logging
     * binding reads its configuration once, when the first logger is made, and parsing makes commands.
     */
    public static boolean verboseRequested(String[] args) {
        for (String a : args) {
            if (a.equals("--")) {
                return false; // what follows belongs to the command run under the lock
            }
            if (a.equals("--verbose")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Sets slf4j-simple's system properties, unless the user already set them with {@code -D}. Without
     * {@code --verbose} the libraries say nothing (Curator's, ZooKeeper's, Redisson's, Kafka's, HikariCP's and
     * the MariaDB driver's SLF4J loggers, gRPC's and the PostgreSQL driver's java.util.logging): stderr then
     * carries Latchkey's own lines only, each of which says what happened to the lock in the command line's
     * words.
     */
    public static void configureLogging(boolean verbose) {
        setDefault("org.slf4j.simpleLogger.logFile", "System.err");
        setDefault("org.slf4j.simpleLogger.defaultLogLevel", verbose ? "info" : "off");
        setDefault("org.slf4j.simpleLogger.log.io.latchkey", verbose ? "debug" : "error");
        setDefault("org.slf4j.simpleLogger.log.org.apache.zookeeper", verbose ? "info" : "off");
        if (!verbose && System.getProperty("java.util.logging.config.file") == null) {
            // gRPC (under jetcd), Netty's JDK fallback and the PostgreSQL driver log through java.util.logging, not SLF4J
            java.util.logging.Logger root = java.util.logging.Logger.getLogger("");
            root.setLevel(java.util.logging.Level.OFF);
            for (java.util.logging.Handler h : root.getHandlers()) {
                h.setLevel(java.util.logging.Level.OFF);
            }
        }
        setDefault("org.slf4j.simpleLogger.showDateTime", "true");
        setDefault("org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS");
        setDefault("org.slf4j.simpleLogger.showShortLogName", "true");
    }

    private static void setDefault(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    /** The version of the jar, from a resource the build fills in. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() throws IOException {
            Properties p = new Properties();
            try (InputStream in = Main.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    p.load(new java.io.InputStreamReader(in, StandardCharsets.UTF_8));
                }
            }
            return new String[] {"latchkey " + p.getProperty("version", "unknown"),
                    "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")"};
        }
    }
}
