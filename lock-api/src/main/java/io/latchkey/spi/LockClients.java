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

    /**
     * Checks {@code options} the way {@link LockClient#connect} does, for a factory method that takes
     * the application's own client: every backend option must be one that {@code provider} declares,
     * and the lease must be longer than {@code timeout} plus {@code safetyMargin} (a renewal answered
     * within the timeout must still find the lease valid). Call it first, before building anything from
     * the options; the backend then adds only its own minimums.
     *
     * @param where what the options are for, for the message, such as {@code "the application's Redisson client"}
     * @return {@code options}
     * @throws IllegalArgumentException naming the unknown option and listing the known ones
     */
    public static LockOptions checkOptions(LockProviderFactory provider, LockOptions options, String where) {
        return Connector.checkOptions(provider, options, where);
    }
}
