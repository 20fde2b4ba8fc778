package io.latchkey.testkit;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import java.net.URI;
import java.time.Duration;

/**
 * The contract of DESIGN section 3, to subclass once per backend.
 *
 * <p>A backend's test supplies the server and, if it wants, the options; every rule is a test in a
 * {@code @Nested} group of this class.
 */
public abstract class LockContract {

    /** The server the contract runs against; started once per test class by the subclass. */
    protected abstract LockServer server();

    /**
     * The options every client of the contract gets. The default lease is short so that failover
     * tests run quickly; timing assertions derive from whatever this returns.
     */
    protected LockOptions options() {
        return LockOptions.builder().lease(Duration.ofSeconds(6)).build();
    }

    /** A new client on the server, reached directly. */
    protected LockClient newClient() {
        return LockClient.connect(URI.create(server().uri(server().endpoints())), options());
    }
}
