package io.latchkey.cli.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * The resource the demo's workers protect: a "report store" on a loopback socket that keeps the
 * highest fencing token it has accepted and refuses writes with a lower one.
 *
 * <p>Protocol, one line each way: {@code WRITE <worker> <token>} gets {@code OK <token>} or
 * {@code REFUSED <highest>}. A token equal to the highest is accepted: the holder writes many times.
 * Thread-safe; its threads are daemons.
 */
final class FencedStore implements AutoCloseable {

    private final ServerSocket listener;
    private long highest = Long.MIN_VALUE; // guarded by this
    private long accepted;                 // guarded by this
    private long refused;                  // guarded by this

    FencedStore() {
        try {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the demo's report store on the loopback interface", e);
        }
        Thread t = new Thread(this::acceptLoop, "latchkey-demo-store");
        t.setDaemon(true);
        t.start();
    }

    int port() {
        return listener.getLocalPort();
    }

    synchronized long accepted() {
        return accepted;
    }

    synchronized long refused() {
        return refused;
    }

    private synchronized String write(long token) {
        if (token < highest) {
            refused++;
            return "REFUSED " + highest;
        }
        highest = token;
        accepted++;
        return "OK " + token;
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket s = listener.accept();
                Thread t = new Thread(() -> serve(s), "latchkey-demo-store-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket s) {
        try (s;
             BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
             PrintWriter out = new PrintWriter(s.getOutputStream(), true, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                String[] parts = line.split(" ");
                out.println(parts.length == 3 && parts[0].equals("WRITE") ? write(Long.parseLong(parts[2])) : "REFUSED 0");
            }
        } catch (IOException | NumberFormatException e) {
            // a worker killed with -9 drops its connection: that is the demo working
        }
    }

    @Override
    public void close() {
        try {
            listener.close();
        } catch (IOException e) {
            // closing on the way out
        }
    }
}
