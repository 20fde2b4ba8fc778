package io.latchkey.cli.server;

import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code latchkey server zookeeper}: an embedded ZooKeeper in the foreground for local experiments.
 *
 * <p>Prints the URI to use and runs until SIGINT or SIGTERM; the JVM's shutdown hook then stops the
 * server and removes its data.
 */
@Command(name = "server", mixinStandardHelpOptions = true,
        description = "Run a lock server in the foreground for local experiments.",
        subcommands = ServerCommand.ZooKeeper.class)
public final class ServerCommand implements Runnable {

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "name the server to run: zookeeper");
    }

    /** The ZooKeeper server. */
    @Command(name = "zookeeper", mixinStandardHelpOptions = true,
            description = {"Run a standalone ZooKeeper server on the loopback interface until Ctrl-C.",
                "Its data lives in a temporary directory removed when it stops."})
    static final class ZooKeeper implements Callable<Integer> {

        @Option(names = "--port", paramLabel = "P", defaultValue = "2181",
                description = "The port on 127.0.0.1 (default: ${DEFAULT-VALUE}; 0 picks a free one).")
        int port;

        @Override
        public Integer call() throws InterruptedException {
            EmbeddedZooKeeper zk;
            try {
                zk = EmbeddedZooKeeper.start(port);
            } catch (java.io.UncheckedIOException e) {
                throw new io.latchkey.cli.CliException(io.latchkey.cli.ExitCodes.BACKEND_UNAVAILABLE, e.getMessage());
            }
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                zk.close();
                System.out.println("zookeeper stopped; its data is removed");
                System.out.flush();
                stopped.countDown();
            }, "latchkey-server-stop"));
            System.out.println("zookeeper is running on " + zk.connectString() + " (tick " + EmbeddedZooKeeper.TICK_MS
                    + " ms, sessions " + 2 * EmbeddedZooKeeper.TICK_MS + " ms to " + EmbeddedZooKeeper.MAX_SESSION_MS / 1000
                    + " s)");
            System.out.println("use: export LATCHKEY_URI='" + zk.uri("lease=5s&timeout=2s") + "'");
            System.out.println("     latchkey run report:nightly -- sh -c 'echo token $LATCHKEY_FENCING_TOKEN; sleep 10'");
            System.out.println("Ctrl-C stops it.");
            System.out.flush();
            stopped.await(); // returns only once the shutdown hook has run, and the JVM is exiting
            return 0;
        }
    }
}
