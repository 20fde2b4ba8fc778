package io.latchkey.testkit.fault;

import java.util.List;
import java.util.Objects;

/**
 * A {@link ChildHolder} whose traffic to the server can be cut and restored, for faults that cut a
 * holder in another process; the child can be killed and paused besides.
 *
 * <p>The kit's default ({@link #throughProxies}) connects the child through a {@link TcpProxy} in front
 * of every server endpoint. A backend whose clients do not stay on the addresses they were given
 * builds its own with {@link #of}, as it does for a {@link CuttableClient}.
 *
 * <p>Thread-safe if the actions are. {@link #close()} ends the child, then releases what the cut
 * needed; it is idempotent.
 */
public final class CuttableChild implements AutoCloseable {

    private final ChildHolder child;
    private final Runnable cut;
    private final Runnable restore;
    private final AutoCloseable afterChild;
    private volatile boolean closed;

    private CuttableChild(ChildHolder child, Runnable cut, Runnable restore, AutoCloseable afterChild) {
        this.child = Objects.requireNonNull(child, "child");
        this.cut = Objects.requireNonNull(cut, "cut");
        this.restore = Objects.requireNonNull(restore, "restore");
        this.afterChild = afterChild;
    }

    /**
     * A cuttable child built by the backend.
     *
     * @param cut stops all traffic between {@code child} and the server, without resetting connections
     * @param restore lets traffic through again, including what was held back
     * @param afterChild closed after the child (the cutting machinery), or {@code null}
     */
    public static CuttableChild of(ChildHolder child, Runnable cut, Runnable restore, AutoCloseable afterChild) {
        return new CuttableChild(child, cut, restore, afterChild);
    }

    /** A child connected through {@code proxies}, cut by cutting all of them. */
    public static CuttableChild throughProxies(ChildHolder child, List<TcpProxy> proxies) {
        List<TcpProxy> all = List.copyOf(proxies);
        return new CuttableChild(child, () -> all.forEach(TcpProxy::cut), () -> all.forEach(TcpProxy::restore),
                () -> all.forEach(TcpProxy::close));
    }

    /** The child. */
    public ChildHolder child() {
        return child;
    }

    /** Cuts the child off the server. */
    public void cut() {
        cut.run();
    }

    /** Lets the child reach the server again. */
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
            child.close();
        } finally {
            if (afterChild != null) {
                try {
                    afterChild.close();
                } catch (Exception e) {
                    throw new IllegalStateException("closing the network-cut machinery failed", e);
                }
            }
        }
    }
}
