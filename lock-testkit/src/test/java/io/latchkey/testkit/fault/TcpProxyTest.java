package io.latchkey.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The proxy on plain local sockets: it forwards, and once cut no byte passes and nothing resets. */
class TcpProxyTest {

    /** How long "nothing arrives" is watched for: a window for a negative observation, not a bound. */
    private static final int QUIET_MILLIS = 300;
    private static final int ANSWER_MILLIS = 10_000;

    private ServerSocket server;
    private final BlockingQueue<Socket> accepted = new LinkedBlockingQueue<>();
    private TcpProxy proxy;

    @BeforeEach
    void start() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(() -> {
            try {
                while (true) {
                    accepted.add(server.accept());
                }
            } catch (IOException e) {
                // closed
            }
        }, "test-acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
        // unresolved, as fixtures give their published ports
        proxy = TcpProxy.start(InetSocketAddress.createUnresolved("localhost", server.getLocalPort()));
    }

    @AfterEach
    void stop() throws IOException {
        proxy.close();
        server.close();
        for (Socket s : accepted) {
            s.close();
        }
    }

    @Test
    void forwardsBothWays() throws Exception {
        try (Socket client = connect()) {
            Socket upstream = upstream();

            send(client, "ping");
            assertThat(receive(upstream, 4)).isEqualTo("ping");
            send(upstream, "pong");
            assertThat(receive(client, 4)).isEqualTo("pong");
        }
    }

    @Test
    void cutPassesNoByteAndResetsNothing() throws Exception {
        try (Socket client = connect()) {
            Socket upstream = upstream();
            send(client, "a");
            assertThat(receive(upstream, 1)).isEqualTo("a");

            proxy.cut();
            assertThat(proxy.isCut()).isTrue();
            send(client, "lost?");
            send(upstream, "back?");

            assertQuiet(upstream);
            assertQuiet(client);
            send(client, "still writable"); // no RST came back: writing still works
            assertThat(client.isClosed()).isFalse();
        }
    }

    @Test
    void connectionOpenedDuringCutIsNotForwarded() throws Exception {
        proxy.cut();
        try (Socket client = connect()) {
            send(client, "hello");

            assertThat(accepted.poll(QUIET_MILLIS, TimeUnit.MILLISECONDS)).as("a connection reaching the server").isNull();
            assertQuiet(client);

            proxy.restore();
            Socket upstream = upstream();
            assertThat(receive(upstream, 5)).isEqualTo("hello");
        }
    }

    @Test
    void restoreDeliversWhatWasHeldBack() throws Exception {
        try (Socket client = connect()) {
            Socket upstream = upstream();
            proxy.cut();
            send(client, "held");
            assertQuiet(upstream);

            proxy.restore();

            assertThat(receive(upstream, 4)).isEqualTo("held");
            send(upstream, "ok");
            assertThat(receive(client, 2)).isEqualTo("ok");
        }
    }

    @Test
    void closeEndsConnections() throws Exception {
        try (Socket client = connect()) {
            upstream();

            proxy.close();

            client.setSoTimeout(ANSWER_MILLIS);
            assertThat(readOrFail(client.getInputStream())).isEqualTo(-1);
        }
    }

    private Socket connect() throws IOException {
        Socket s = new Socket();
        InetSocketAddress endpoint = proxy.endpoint();
        s.connect(new InetSocketAddress(endpoint.getHostString(), endpoint.getPort()), ANSWER_MILLIS);
        return s;
    }

    private Socket upstream() throws InterruptedException {
        Socket s = accepted.poll(ANSWER_MILLIS, TimeUnit.MILLISECONDS);
        assertThat(s).as("the proxy's connection to the server").isNotNull();
        return s;
    }

    private static void send(Socket s, String text) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(text.getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static String receive(Socket s, int bytes) throws IOException {
        s.setSoTimeout(ANSWER_MILLIS);
        byte[] buffer = s.getInputStream().readNBytes(bytes);
        return new String(buffer, StandardCharsets.UTF_8);
    }

    /** Nothing arrives: the read times out; it neither returns data or end of stream nor sees a reset. */
    private static void assertQuiet(Socket s) throws IOException {
        s.setSoTimeout(QUIET_MILLIS);
        assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
    }

    private static int readOrFail(InputStream in) {
        try {
            return in.read();
        } catch (IOException e) {
            return -1; // a reset on close is as good as an end of stream here
        }
    }
}
