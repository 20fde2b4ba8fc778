package io.latchkey.example.memory;

import io.latchkey.LockOptions;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.LockProviderFactory;
import io.latchkey.spi.LockUri;
import java.util.Set;

/**
 * The provider of {@code memory://host:port} URIs: locks on a {@link MemoryLockServer}. The first
 * host of the URI is used. Backend option: {@code flaw} (see {@link Flaw}), for the kit's own tests.
 *
 * <p>Found with {@link java.util.ServiceLoader}; stateless and thread-safe.
 */
public final class MemoryLockProvider implements LockProviderFactory {

    /** The port of a host given without one. */
    public static final int DEFAULT_PORT = 7070;

    @Override
    public Set<String> schemes() {
        return Set.of("memory");
    }

    @Override
    public Set<String> backendOptions() {
        return Set.of("flaw");
    }

    @Override
    public int defaultPort(String scheme) {
        return DEFAULT_PORT;
    }

    @Override
    public LockBackend connect(LockUri uri, LockOptions options) {
        Flaw flaw = Flaw.parse(options.backendOption("flaw", null));
        return MemoryLockBackend.connect(uri.hosts().get(0), options, flaw);
    }
}
