package io.latchkey.internal;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.LockProviderFactory;
import java.net.URI;
import java.util.Objects;

/** {@link LockClient#connect}: parse the URI, find the provider, connect, wrap in the shared layer. */
public final class Connector {

    private Connector() {
    }

    public static LockClient connect(URI uri, LockOptions options) {
        Objects.requireNonNull(uri, "uri");
        return connect(uri.toString(), options);
    }

    public static LockClient connect(String uri, LockOptions options) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(options, "options");
        String text = uri.trim();
        String scheme = UriParser.scheme(text);
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        if (loader == null) {
            loader = LockClient.class.getClassLoader();
        }
        LockProviderFactory provider = ProviderDiscovery.find(scheme, loader,
                System.getProperty(ProviderDiscovery.PROVIDER_PROPERTY));
        UriParser.Parsed parsed = UriParser.parse(text, options, provider);
        LockBackend backend = provider.connect(parsed.uri(), parsed.options());
        return new SharedLockClient(scheme, backend, parsed.options());
    }
}
