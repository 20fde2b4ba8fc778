package io.latchkey.internal;

import io.latchkey.Election;
import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.MultiLock;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.LockClients;
import io.latchkey.spi.LockProviderFactory;
import io.latchkey.spi.LockUri;
import java.net.URI;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * The one door from the public packages into this one: {@link LockClient#connect} (parse the URI,
 * find the provider, connect, wrap in the shared layer) and the shared layer that
 * {@code io.latchkey.spi} finds as a service. Everything else here is package-private.
 */
public final class Connector {

    private Connector() {
    }

    /** {@link LockClient#checkName}: the one rule of names. */
    public static String checkName(String name) {
        return LockNames.validate(name);
    }

    /** {@link LockClient#checkSemaphore}: the rule of names and the range of permits. */
    public static void checkSemaphore(String name, int permits) {
        SharedSemaphores.checkSemaphore(name, permits);
    }

    /** {@link LockClient#checkMultiLock}: each name by the rule, each once; in the order they are taken. */
    public static List<String> checkMultiLock(Collection<String> names) {
        return MultiLockHandle.checkNames(names);
    }

    /** {@link LockClient#multiLock(java.util.Collection)}: the names checked and put in their global order. */
    public static MultiLock multiLock(LockClient client, Collection<String> names) {
        return MultiLockHandle.of(client, names);
    }

    /** {@link LockClient#election(String)}: the election on the client's lock of that name. */
    public static Election election(LockClient client, String name) {
        return ElectionHandle.of(client, name);
    }

    public static LockClient connect(URI uri, LockOptions options) {
        Objects.requireNonNull(uri, "uri");
        return connect(uri.toString(), options);
    }

    public static LockClient connect(String uri, LockOptions options) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(options, "options");
        String text = uri.trim();
        String scheme = LockUri.schemeOf(text);
        LockProviderFactory provider = ProviderDiscovery.find(scheme, LockProviderFactory.discoveryLoader(),
                System.getProperty(ProviderDiscovery.PROVIDER_PROPERTY));
        LockUri.Parsed parsed = LockUri.parse(text, options, provider);
        LockBackend backend = provider.connect(parsed.uri(), parsed.options());
        return new SharedLockClient(scheme, backend, parsed.options());
    }

    /** The shared layer that {@link io.latchkey.spi.LockClients#of} finds as a service. */
    public static final class Layer implements LockClients.SharedLayer {

        @Override
        public LockClient wrap(String backendName, LockBackend backend, LockOptions options) {
            return new SharedLockClient(backendName, backend, options);
        }
    }
}
