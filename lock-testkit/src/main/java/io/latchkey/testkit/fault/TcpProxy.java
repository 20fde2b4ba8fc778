package io.latchkey.testkit.fault;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on the loopback interface in front of one server endpoint, that can cut the traffic.
 *
 * <p>While cut, no byte passes in either direction and nothing is sent back: no RST, no FIN. The
 * proxy stops reading from both sides, so what a client sends waits in socket buffers, as it would in
 * retransmission queues during a real partition; connections opened during the cut are accepted but
 * not forwarded. {@link #restore()} resumes delivery, as a healed network would. What the proxy cannot
 * imitate: the kernel still acknowledges segments, so TCP keepalive alone does not notice the cut; a
 * client has to notice from its own application-level deadlines, which is what the contract tests.
 *
 * <p>Thread-safe. Its threads are daemon threads named {@code testkit-proxy-...} (never
 * {@code latchkey-...}, which rule 10 counts as the library's own).
 */
public final class TcpProxy implements AutoCloseable {

    private static final AtomicInteger IDS = new AtomicInteger();

    private final InetSocketAddress target;
    private final ServerSocket listener;
    private final String name;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Object gate = new Object();
    private boolean cut; // guarded by gate
    private volatile boolean closed;
    private volatile long answerDelayNanos;

    private TcpProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.name = "testkit-proxy-" + IDS.incrementAndGet() + "-" + listener.getLocalPort();
    }

    /** Starts a proxy that forwards to {@code target}. */
    public static TcpProxy start(InetSocketAddress target) {
        TcpProxy proxy;
        try {
            proxy = new TcpProxy(target);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a proxy port for " + target, e);
        }
        proxy.thread("accept", proxy::acceptLoop).start();
        return proxy;
    }

    /** Where clients connect: the loopback address and the proxy's port. */
    public InetSocketAddress endpoint() {
        // the literal address, so that a URI built from it names no host a client would resolve
        return InetSocketAddress.createUnresolved(listener.getInetAddress().getHostAddress(), listener.getLocalPort());
    }

    /** The server endpoint this proxy forwards to. */
    public InetSocketAddress target() {
        return target;
    }

    /** Stops forwarding in both directions, silently. Idempotent. */
    public void cut() {
        synchronized (gate) {
            cut = true;
        }
    }

    /** Resumes forwarding, including what was held back during the cut. Idempotent. */
    public void restore() {
        synchronized (gate) {
            cut = false;
            gate.notifyAll();
        }
    }

    /**
     * Holds every byte the server sends for {@code delay} before passing it on, each from the moment the
     * proxy read it, so that bytes answered together arrive together: every round trip through the proxy
     * then takes at least {@code delay}, and a test can tell one round trip from two by the time an
     * operation takes. {@link Duration#ZERO} ends the delay (bytes already held keep theirs).
     */
    public void delayAnswers(Duration delay) {
        answerDelayNanos = delay.toNanos();
    }

    /** Whether the proxy is cut now. */
    public boolean isCut() {
        synchronized (gate) {
            return cut;
        }
    }

    /** Closes the listener and every connection. Idempotent. */
    @Override
    public void close() {
        closed = true;
        synchronized (gate) {
            gate.notifyAll();
        }
        closeQuietly(listener);
        for (Socket s : List.copyOf(sockets)) {
            closeQuietly(s);
        }
    }

    @Override
    public String toString() {
        return "TcpProxy{" + endpoint() + " -> " + target + (isCut() ? ", cut" : "") + '}';
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            sockets.add(client);
            thread("connect", () -> connect(client)).start();
        }
    }

    private void connect(Socket client) {
        Socket server = null;
        try {
            awaitOpen();
            server = new Socket();
            sockets.add(server);
            // fixtures may give unresolved addresses (a host name and a published port)
            server.connect(target.isUnresolved() ? new InetSocketAddress(target.getHostString(), target.getPort()) : target);
            Socket upstream = server;
            thread("up", () -> pump(client, upstream, false)).start();
            thread("down", () -> pump(upstream, client, true)).start();
        } catch (IOException | InterruptedException e) {
            closeQuietly(client);
            if (server != null) {
                closeQuietly(server);
            }
        }
    }

    private void pump(Socket from, Socket to, boolean answers) {
        byte[] buffer = new byte[16 * 1024];
        DelayLine line = answers ? new DelayLine(to) : null;
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            while (true) {
                awaitOpen();
                int n = in.read(buffer);
                // a cut may have started while the read blocked: hold what was read until it ends
                awaitOpen();
                long delay = answerDelayNanos;
                if (line != null && (delay > 0 || !line.isEmpty())) {
                    // once bytes are held, later ones queue behind them: the order on the wire stays
                    line.add(n < 0 ? null : Arrays.copyOf(buffer, n), System.nanoTime() + delay);
                    if (n < 0) {
                        return;
                    }
                    continue;
                }
                if (n < 0) {
                    to.shutdownOutput();
                    return;
                }
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException | InterruptedException e) {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    /** Bytes read from the server, and when they are due at the client. */
    private record Chunk(long due, byte[] data) {
    }

    /** Bytes held until their time, written in order by a thread of their own; null data is the end of the stream. */
    private final class DelayLine {
        private final Socket to;
        private final ArrayDeque<Chunk> held = new ArrayDeque<>(); // guarded by this
        private Thread writer; // guarded by this

        DelayLine(Socket to) {
            this.to = to;
        }

        synchronized boolean isEmpty() {
            return held.isEmpty();
        }

        synchronized void add(byte[] data, long due) {
            held.add(new Chunk(due, data));
            notifyAll();
            if (writer == null) {
                writer = thread("delay", this::write);
                writer.start();
            }
        }

        private void write() {
            try {
                OutputStream out = to.getOutputStream();
                while (!closed) {
                    Chunk next;
                    synchronized (this) {
                        while (held.isEmpty() && !closed) {
                            wait(100);
                        }
                        next = held.peek();
                    }
                    if (next == null) {
                        continue;
                    }
                    long wait = next.due() - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    awaitOpen();
                    byte[] data = next.data();
                    if (data == null) {
                        to.shutdownOutput();
                        return;
                    }
                    out.write(data);
                    out.flush();
                    synchronized (this) {
                        held.poll();
                    }
                }
            } catch (IOException | InterruptedException e) {
                closeQuietly(to);
            }
        }
    }

    private void awaitOpen() throws InterruptedException, IOException {
        synchronized (gate) {
            while (cut && !closed) {
                gate.wait();
            }
        }
        if (closed) {
            throw new IOException("proxy closed");
        }
    }

    private Thread thread(String role, Runnable body) {
        Thread t = new Thread(body, name + "-" + role);
        t.setDaemon(true);
        return t;
    }

    private void closeQuietly(AutoCloseable c) {
        if (c instanceof Socket) {
            sockets.remove(c);
        }
        try {
            c.close();
        } catch (Exception e) {
            // closing on the way out: nothing useful to do with a failure
        }
    }
}
