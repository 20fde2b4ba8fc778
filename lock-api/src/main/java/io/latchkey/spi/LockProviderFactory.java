package io.latchkey.spi;

import io.latchkey.LockException;
import io.latchkey.LockOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;

/**
 * A backend's entry point, found with {@link java.util.ServiceLoader}.
 *
 * <p>Implementations are public classes with a public no-argument constructor, registered in
 * {@code META-INF/services/io.latchkey.spi.LockProviderFactory}; the constructor does nothing heavy:
 * connecting happens in {@link #connect}.
 */
public interface LockProviderFactory {

    /** The URI schemes this provider serves, in lower case, for example {@code redis} and {@code rediss}. */
    Set<String> schemes();

    /** The names of the backend-specific options this provider understands, beyond the shared ones. */
    default Set<String> backendOptions() {
        return Set.of();
    }

    /** The port used for a host given without one. */
    int defaultPort(String scheme);

    /**
     * Connects to the backend. Options are validated first; a bad one is an
     * {@link IllegalArgumentException} that names it.
     *
     * @throws io.latchkey.LockBackendUnavailableException if the backend cannot be reached within
     *     {@link LockOptions#timeout()}
     */
    LockBackend connect(LockUri uri, LockOptions options);

    /**
     * The class loader that providers are found through: the current thread's context class loader,
     * else lock-api's own, as {@link io.latchkey.LockClient#connect(String)} finds them.
     */
    static ClassLoader discoveryLoader() {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        return loader != null ? loader : LockProviderFactory.class.getClassLoader();
    }

    /**
     * The providers that {@code loader} finds, in {@link ServiceLoader}'s order: those a client chooses
     * among by scheme.
     *
     * @throws LockException if a provider on the class path cannot be loaded
     */
    static List<LockProviderFactory> installed(ClassLoader loader) {
        List<LockProviderFactory> found = new ArrayList<>();
        try {
            for (LockProviderFactory provider : ServiceLoader.load(LockProviderFactory.class, loader)) {
                found.add(provider);
            }
        } catch (ServiceConfigurationError e) {
            throw new LockException(null, "a Latchkey provider on the class path could not be loaded: " + e.getMessage(), e);
        }
        return List.copyOf(found);
    }
}
