package io.latchkey.spi;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * How a backend's {@code connect} charges the server only for the server's time (contract rule 2):
 * {@code timeout} is the server's, and the first connects of a backend in a JVM get a stated
 * allowance, {@link #ALLOWANCE}, for this JVM's own start-up of the client library.
 *
 * <p>The first connect of a JVM loads and initialises thousands of classes of the client library
 * (Netty, gRPC, Redisson, Kafka's network client, Curator) and starts its event loops; four JVMs
 * starting at once on two busy cores spend seconds on it, and the library's own timers run meanwhile.
 * Blaming the server for that time would fail a connect to a healthy, idle server. So a connect is two
 * steps:
 * <ol>
 *   <li>{@link #probe}: this JVM's own sockets, with classes the JDK has loaded anyway, send the
 *       protocol's smallest request to each host in turn and wait for any answer — bytes, or an orderly
 *       close — within {@code timeout}. This times the server and nothing else: a refused port, a host
 *       that does not resolve, a listener that never answers, a paused server all fail here, within
 *       {@code timeout}, warm JVM or cold.</li>
 *   <li>The client library starts and connects within what is left of {@code timeout} plus
 *       {@link #allowance()}: {@link #ALLOWANCE} until one connect of the backend has succeeded in this
 *       JVM, nothing after that. A server that answered the probe and then froze therefore fails
 *       connect within {@code timeout}, plus {@link #ALLOWANCE} in a JVM whose client library has never
 *       connected yet: never a hang.</li>
 * </ol>
 *
 * <p>Thread-safe: one instance per backend, held in a static field.
 */
public final class Startup {

    /**
     * What a connect may take beyond {@code timeout} while the client library has not yet connected
     * once in this JVM: 15 s. Four cold JVMs connecting at once on a loaded two-core machine were
     * measured to start their client libraries within a few seconds each; the allowance is a multiple
     * of that, and it is only ever spent when the server answered the probe.
     */
    public static final Duration ALLOWANCE = Duration.ofSeconds(15);

    private static final ThreadFactory RESOLVERS = DaemonThreads.factory("latchkey-probe-resolve");

    private final AtomicBoolean warm = new AtomicBoolean();

    /** A backend's start-up state: cold until {@link #connected()}. */
    public Startup() {
    }

    /** {@link #ALLOWANCE} until a connect of this backend has succeeded in this JVM, then zero. */
    public Duration allowance() {
        return warm.get() ? Duration.ZERO : ALLOWANCE;
    }

    /** Records that a connect succeeded: the client library is loaded and later connects get no allowance. */
    public void connected() {
        warm.set(true);
    }

    /** No host answered the probe; the message says for each host what went wrong, with advice. */
    public static final class NoAnswer extends Exception {
        private static final long serialVersionUID = 1L;
        private final boolean silent;

        NoAnswer(String reasons, boolean silent) {
            super(reasons, null, false, false);
            this.silent = silent;
        }

        /** Whether a host was reached but did not answer in time: only then may a longer timeout help. */
        public boolean silent() {
            return silent;
        }
    }

    /**
     * Sends {@code hello} to each host in turn, each within an equal share of what is left of
     * {@code deadline}, until one answers with at least one byte or closes the connection in order.
     *
     * @param hello the protocol's smallest request, such as Redis's {@code PING}; a TLS listener takes it
     *     for a broken handshake and closes the connection, which counts as an answer too
     * @param server what runs there, for the advice, such as {@code "etcd"}
     * @return the host that answered
     * @throws NoAnswer if none answered: for each host (named when there are several) why, with advice
     */
    public static LockUri.HostAndPort probe(List<LockUri.HostAndPort> hosts, Deadline deadline, byte[] hello,
            String server) throws NoAnswer, InterruptedException {
        List<String> reasons = new ArrayList<>();
        boolean silent = false;
        for (int i = 0; i < hosts.size(); i++) {
            LockUri.HostAndPort host = hosts.get(i);
            // with one host the caller's message names it already
            String at = hosts.size() == 1 ? "" : host + ": ";
            Duration share = Duration.ofMillis(Math.max(1, deadline.remainingMillis() / (hosts.size() - i)));
            try {
                ask(host, share, hello);
                return host;
            } catch (UnknownHostException e) {
                // with one host the caller's message names it already: named once, the advice fits the cause
                reasons.add(hosts.size() == 1 ? "the host does not resolve; check the host name"
                        : "host '" + host.host() + "' does not resolve; check the host name");
            } catch (ConnectException e) {
                reasons.add(at + "connection refused, nothing listens there; check the host and port, and check that "
                        + server + " runs there");
            } catch (SocketTimeoutException e) {
                silent = true;
                reasons.add(at + e.getMessage());
            } catch (IOException e) {
                reasons.add(at + e);
            }
        }
        throw new NoAnswer(String.join("; ", reasons), silent);
    }

    private static void ask(LockUri.HostAndPort host, Duration bound, byte[] hello) throws IOException, InterruptedException {
        Deadline share = Deadline.after(bound);
        InetAddress address = resolve(host.host(), share, bound);
        try (Socket socket = new Socket()) {
            try {
                socket.connect(new InetSocketAddress(address, host.port()), millis(share));
            } catch (SocketTimeoutException e) {
                throw new SocketTimeoutException("did not accept a connection within " + Durations.format(bound)
                        + "; check the network between this process and the server");
            }
            socket.setTcpNoDelay(true);
            OutputStream out = socket.getOutputStream();
            out.write(hello);
            out.flush();
            // the clock of the answer runs from here: the request is on the wire
            socket.setSoTimeout(millis(share));
            InputStream in = socket.getInputStream();
            try {
                in.read(); // a byte, or -1 for an orderly close: either way the server's process reacted
            } catch (SocketTimeoutException e) {
                throw new SocketTimeoutException("accepted the connection but did not answer within "
                        + Durations.format(bound) + ": the server is paused or overloaded, or what listens there is"
                        + " not the server");
            } catch (EOFException e) {
                // closed: an answer
            }
        }
    }

    /** Resolves on a daemon thread, so that a resolver that does not answer costs the share, not more. */
    private static InetAddress resolve(String host, Deadline share, Duration bound) throws IOException, InterruptedException {
        CompletableFuture<InetAddress> resolved = new CompletableFuture<>();
        RESOLVERS.newThread(() -> {
            try {
                resolved.complete(InetAddress.getByName(host));
            } catch (Throwable e) {
                resolved.completeExceptionally(e);
            }
        }).start();
        try {
            return resolved.get(Math.max(1, share.remainingNanos()), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException(e.getCause());
        } catch (TimeoutException e) {
            throw new SocketTimeoutException("could not be resolved within " + Durations.format(bound)
                    + "; check the host name and the resolver");
        }
    }

    private static int millis(Deadline d) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, d.remainingMillis()));
    }
}
