package io.latchkey.testkit.fault;

import io.latchkey.LockClient;
import java.util.List;
import java.util.Objects;

/**
 * A lock client whose connection to the server can be cut and restored, for the network-cut faults.
 *
 * <p>The kit's default ({@link #throughProxies}) puts a {@link TcpProxy} in front of every server
 * endpoint and connects the client to the proxies. A backend whose clients do not stay on the
 * addresses they were given (Kafka clients follow the brokers' advertised listeners) builds its own
 * with {@link #of}, from a client and the actions that cut and restore it.
 *
 * <p>Thread-safe if the actions are. {@link #close()} closes the client, then releases what the cut
 * needed (the proxies); it is idempotent.
 */
public final class CuttableClient implements AutoCloseable {

    private final LockClient client;
    private final Runnable cut;
    private final Runnable restore;
    private final AutoCloseable afterClient;
    private volatile boolean closed;

    private CuttableClient(LockClient client, Runnable cut, Runnable restore, AutoCloseable afterClient) {
        this.client = Objects.requireNonNull(client, "client");
        this.cut = Objects.requireNonNull(cut, "cut");
        this.restore = Objects.requireNonNull(restore, "restore");
        this.afterClient = afterClient;
    }

    /**
     * A cuttable client built by the backend.
     *
     * @param cut stops all traffic between {@code client} and the server, without resetting connections
     * @param restore lets traffic through again
     * @param afterClient closed after the client (the cutting machinery), or {@code null}
     */
    public static CuttableClient of(LockClient client, Runnable cut, Runnable restore, AutoCloseable afterClient) {
        return new CuttableClient(client, cut, restore, afterClient);
    }

    /** A client connected through {@code proxies}, cut by cutting all of them. */
    public static CuttableClient throughProxies(LockClient client, List<TcpProxy> proxies) {
        List<TcpProxy> all = List.copyOf(proxies);
        return new CuttableClient(client, () -> all.forEach(TcpProxy::cut), () -> all.forEach(TcpProxy::restore),
                () -> all.forEach(TcpProxy::close));
    }

    /** The client. */
    public LockClient client() {
        return client;
    }

    /** Cuts the client off the server. */
    public void cut() {
        cut.run();
    }

    /** Lets the client reach the server again. */
    public void restore() {
        restore.run();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            client.close();
        } finally {
            if (afterClient != null) {
                try {
                    afterClient.close();
                } catch (Exception e) {
                    throw new IllegalStateException("closing the network-cut machinery failed", e);
                }
            }
        }
    }
}
