package io.latchkey.memory;

import io.latchkey.LockOptions;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.LockProviderFactory;
import io.latchkey.spi.LockUri;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The provider for {@code memory://name}: every client of the same host name shares one
 * {@link InMemoryServer}. Registered only by the discovery tests' class loaders.
 */
public class InMemoryProvider implements LockProviderFactory {

    static final Map<String, InMemoryServer> SERVERS = new ConcurrentHashMap<>();

    /** The last options a backend was connected with, for tests of URI options. */
    public static volatile LockOptions lastOptions;
    public static volatile LockUri lastUri;

    @Override
    public Set<String> schemes() {
        return Set.of("memory");
    }

    @Override
    public Set<String> backendOptions() {
        return Set.of("flavour");
    }

    @Override
    public int defaultPort(String scheme) {
        return 1;
    }

    @Override
    public LockBackend connect(LockUri uri, LockOptions options) {
        lastOptions = options;
        lastUri = uri;
        InMemoryServer server = SERVERS.computeIfAbsent(uri.hosts().get(0).host(), k -> new InMemoryServer());
        return new InMemoryBackend(server, options.lease(), options.timeout());
    }
}
