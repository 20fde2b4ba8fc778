package io.latchkey.spi;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.internal.Connector;

/**
 * Wraps a {@link LockBackend} in the shared client layer. Backends use it for their factory methods
 * that take a client the application already has.
 */
public final class LockClients {

    private LockClients() {
    }

    /**
     * Returns a {@link LockClient} on {@code backend}; closing the client closes the backend.
     *
     * @param backendName a short name of the backend for thread names and logs, such as {@code redis}
     */
    public static LockClient of(String backendName, LockBackend backend, LockOptions options) {
        return Connector.wrap(backendName, backend, options);
    }
}
