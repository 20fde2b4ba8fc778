package io.latchkey.internal;

import io.latchkey.LockClient;
import io.latchkey.LockOptions;
import io.latchkey.spi.LockBackend;
import io.latchkey.spi.LockProviderFactory;
import io.latchkey.spi.LockUri;
import java.net.URI;
import java.util.Locale;
import java.util.Objects;

/** {@link LockClient#connect}: parse the URI, find the provider, connect, wrap in the shared layer. */
public final class Connector {

    private Connector() {
    }

    public static LockClient connect(String uri, LockOptions options) {
        Objects.requireNonNull(uri, "uri");
        URI parsed;
        try {
            parsed = new URI(uri.trim());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalArgumentException("malformed lock URI '" + UriParser.redact(uri) + "': " + e.getReason()
                    + (e.getIndex() >= 0 ? " at index " + e.getIndex() : ""), null);
        }
        return connect(parsed, options);
    }

    public static LockClient connect(URI uri, LockOptions options) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(options, "options");
        String scheme = UriParser.scheme(uri);
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        if (loader == null) {
            loader = LockClient.class.getClassLoader();
        }
        LockProviderFactory provider = ProviderDiscovery.find(scheme, loader,
                System.getProperty(ProviderDiscovery.PROVIDER_PROPERTY));
        UriParser.Parsed parsed = UriParser.parse(uri, options, provider);
        LockBackend backend = provider.connect(parsed.uri(), parsed.options());
        return new SharedLockClient(scheme.toLowerCase(Locale.ROOT), backend, parsed.options());
    }
}
