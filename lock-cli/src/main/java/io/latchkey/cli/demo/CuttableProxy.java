package io.latchkey.cli.demo;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The demo's backend pause: a loopback TCP proxy between the workers and the embedded ZooKeeper that
 * stops passing bytes, both ways, while cut, without closing anything, so that both sides see silence
 * as in a real partition or a frozen server. Pausing the server itself is not possible in-process.
 * Thread-safe; its threads are daemons.
 */
final class CuttableProxy implements AutoCloseable {

    private final InetSocketAddress target;
    private final ServerSocket listener;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Object gate = new Object();
    private boolean cut; // guarded by gate

    CuttableProxy(InetSocketAddress target) {
        this.target = target;
        try {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the demo's proxy port", e);
        }
        daemon(this::acceptLoop).start();
    }

    int port() {
        return listener.getLocalPort();
    }

    void cut() {
        synchronized (gate) {
            cut = true;
        }
    }

    void restore() {
        synchronized (gate) {
            cut = false;
            gate.notifyAll();
        }
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(target.getAddress(), target.getPort());
                sockets.add(client);
                sockets.add(server);
                daemon(() -> pump(client, server)).start();
                daemon(() -> pump(server, client)).start();
            } catch (IOException e) {
                if (listener.isClosed()) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buffer = new byte[16 * 1024];
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            while (true) {
                int n = in.read(buffer);
                awaitOpen(); // what was read as the cut began waits with the rest
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

    private void awaitOpen() throws InterruptedException {
        synchronized (gate) {
            while (cut) {
                gate.wait();
            }
        }
    }

    private static Thread daemon(Runnable r) {
        Thread t = new Thread(r, "latchkey-demo-proxy");
        t.setDaemon(true);
        return t;
    }

    private void closeQuietly(Socket s) {
        sockets.remove(s);
        try {
            s.close();
        } catch (IOException e) {
            // closing on the way out
        }
    }

    @Override
    public void close() {
        restore();
        try {
            listener.close();
        } catch (IOException e) {
            // closing on the way out
        }
        sockets.forEach(this::closeQuietly);
    }
}
