package io.latchkey.zookeeper;

import io.latchkey.spi.DaemonThreads;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.Durations;
import io.latchkey.spi.LockUri;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
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

/**
 * One ZooKeeper session handshake of its own, before Curator connects, to learn what the server's
 * configuration does to sessions, and, when no server answers, why.
 *
 * <p>The handshake asks for a session timeout of 1 ms; the server raises it to its
 * {@code minSessionTimeout}, which is {@code 2 × tickTime} unless the operator set it, and says so in
 * its answer. The tick matters because a server expires sessions in buckets of one tick: a session
 * silent since {@code t} ends between {@code t + timeout} and {@code t + timeout + tick}. The server's
 * {@code tickTime} itself is not readable by a client (the {@code conf} four-letter word and the admin
 * server are usually off), so the tick is taken as half the minimum session timeout; an operator who
 * raised {@code minSessionTimeout} above two ticks makes that estimate larger than the tick, which
 * only shortens the session Latchkey asks for. The probe session is closed at once; at worst it
 * expires on its own after that minimum timeout, and it never holds a node.
 *
 * <p>Each host gets an equal share of what is left of the caller's deadline, in the URI's order, until
 * one answers. Thread-safe (stateless).
 */
final class ServerProbe {

    private static final ThreadFactory RESOLVERS = DaemonThreads.factory("latchkey-zookeeper-resolve");
    private static final int CLOSE_SESSION = -11;

    private ServerProbe() {
    }

    /** What the first host that answered said. */
    record Answer(LockUri.HostAndPort host, Duration minSessionTimeout) {

        /** The server's tick as far as a client can learn it: half the minimum session timeout. */
        Duration tick() {
            return minSessionTimeout.dividedBy(2);
        }
    }

    /** No host answered; {@link #getMessage()} lists each host with what went wrong, advice included. */
    static final class NoAnswer extends Exception {
        NoAnswer(String reasons) {
            super(reasons, null, false, false);
        }
    }

    static Answer probe(List<LockUri.HostAndPort> hosts, Deadline deadline) throws NoAnswer, InterruptedException {
        List<String> reasons = new ArrayList<>();
        for (int i = 0; i < hosts.size(); i++) {
            LockUri.HostAndPort host = hosts.get(i);
            Duration share = Duration.ofMillis(Math.max(1, deadline.remainingMillis() / (hosts.size() - i)));
            try {
                return new Answer(host, handshake(host, share));
            } catch (UnknownHostException e) {
                reasons.add("host '" + host.host() + "' cannot be resolved; check the host name in the URI");
            } catch (ConnectException e) {
                reasons.add(host + " refused the connection: nothing listens there; check the host and port in the URI"
                        + " and that zookeeper runs there");
            } catch (SocketTimeoutException e) {
                reasons.add(host + " " + e.getMessage());
            } catch (EOFException e) {
                reasons.add(host + " closed the connection without a handshake: it is not serving (an ensemble member"
                        + " without a quorum, or not a zookeeper server)");
            } catch (IOException e) {
                reasons.add(host + ": " + e);
            }
        }
        throw new NoAnswer(String.join("; ", reasons));
    }

    private static Duration handshake(LockUri.HostAndPort host, Duration bound) throws IOException, InterruptedException {
        Deadline share = Deadline.after(bound);
        InetAddress address = resolve(host.host(), share, bound);
        try (Socket socket = new Socket()) {
            try {
                socket.connect(new InetSocketAddress(address, host.port()), timeoutMillis(share));
            } catch (SocketTimeoutException e) {
                throw new SocketTimeoutException("did not accept a connection within " + Durations.format(bound)
                        + "; check the network between this process and the server");
            }
            socket.setSoTimeout(timeoutMillis(share));
            socket.setTcpNoDelay(true);
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.write(frame(body -> {
                body.writeInt(0); // protocol version
                body.writeLong(0); // last zxid seen
                body.writeInt(1); // requested session timeout: the server raises it to its minimum
                body.writeLong(0); // session id: a new session
                body.writeInt(16);
                body.write(new byte[16]); // password
                body.writeBoolean(false); // read-only
            }));
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            int negotiated;
            try {
                in.readInt(); // length
                in.readInt(); // protocol version
                negotiated = in.readInt();
            } catch (SocketTimeoutException e) {
                throw new SocketTimeoutException("accepted the connection but sent no zookeeper handshake within "
                        + Durations.format(bound) + ": the server is paused or overloaded, or it is not"
                        + " a zookeeper server");
            }
            if (negotiated <= 0) {
                throw new EOFException("no session");
            }
            try {
                out.write(frame(body -> {
                    body.writeInt(1); // xid
                    body.writeInt(CLOSE_SESSION);
                }));
                out.flush();
            } catch (IOException e) {
                // the probe session expires on its own after the minimum session timeout
            }
            return Duration.ofMillis(negotiated);
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
            return resolved.get(share.remainingNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException) {
                throw (IOException) e.getCause();
            }
            throw new IOException(e.getCause());
        } catch (TimeoutException e) {
            throw new SocketTimeoutException("could not be resolved within " + Durations.format(bound)
                    + "; check the host name and the resolver");
        }
    }

    private interface Body {
        void write(DataOutputStream body) throws IOException;
    }

    private static byte[] frame(Body body) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream b = new DataOutputStream(bytes);
        b.writeInt(0);
        body.write(b);
        byte[] framed = bytes.toByteArray();
        int length = framed.length - 4;
        framed[0] = (byte) (length >>> 24);
        framed[1] = (byte) (length >>> 16);
        framed[2] = (byte) (length >>> 8);
        framed[3] = (byte) length;
        return framed;
    }

    private static int timeoutMillis(Deadline d) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, d.remainingMillis()));
    }
}
