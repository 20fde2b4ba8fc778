package io.latchkey.spi;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import java.util.Objects;
import java.util.ServiceLoader;

/**
 * Wraps a {@link LockBackend} in the shared client layer. Backends use it for their factory methods
 * that take a client the application already has.
 *
 * <p>This package never names {@code io.latchkey.internal}, which builds on it: the shared layer is
 * found as the one {@link SharedLayer} service that lock-api itself declares.
 */
public final class LockClients {

    private LockClients() {
    }

    /**
     * The shared client layer, as lock-api provides it (a service in its {@code META-INF/services});
     * not for backends to implement.
     */
    public interface SharedLayer {

        /** A {@link LockClient} on {@code backend}, whose close closes the backend. */
        LockClient wrap(String backendName, LockBackend backend, LockOptions options);
    }

    /** lock-api's own layer, loaded once. */
    private static final class Layer {
        static final SharedLayer INSTANCE = ServiceLoader.load(SharedLayer.class, SharedLayer.class.getClassLoader())
                .findFirst().orElseThrow(() -> new IllegalStateException("lock-api's shared layer is missing from its"
                        + " META-INF/services: a repackaged lock-api jar must keep that folder"));
    }

    /**
     * Returns a {@link LockClient} on {@code backend}; closing the client closes the backend.
     *
     * @param backendName a short name of the backend for thread names and logs, such as {@code redis}
     */
    public static LockClient of(String backendName, LockBackend backend, LockOptions options) {
        return Layer.INSTANCE.wrap(backendName, backend, options);
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
        Objects.requireNonNull(provider, "provider");
        Objects.requireNonNull(options, "options");
        UriParser.checkBackendOptions(options, provider, where);
        UriParser.checkLeaseAgainstTimeout(options, where);
        return options;
    }
}
