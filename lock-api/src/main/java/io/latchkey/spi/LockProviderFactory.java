package io.latchkey.spi;

import io.latchkey.LockOptions;
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
}
