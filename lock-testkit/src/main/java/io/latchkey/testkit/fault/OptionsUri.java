package io.latchkey.testkit.fault;

import io.latchkey.LockOptions;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/**
 * Writes {@link LockOptions} into a connection URI, so that another process (a child JVM) connects
 * with exactly the options of the test.
 *
 * <p>Stateless and thread-safe.
 */
public final class OptionsUri {

    private OptionsUri() {
    }

    /**
     * Returns {@code uri} (scheme, hosts and path, no query) with the credentials of {@code options}
     * in its user info and every other option in its query.
     */
    public static String of(String uri, LockOptions options) {
        StringBuilder query = new StringBuilder();
        append(query, "lease", millis(options.lease()));
        append(query, "safetyMargin", millis(options.safetyMargin()));
        append(query, "timeout", millis(options.timeout()));
        if (options.namespace() != null) {
            append(query, "namespace", options.namespace());
        }
        for (Map.Entry<String, String> e : options.backendOptions().entrySet()) {
            append(query, e.getKey(), e.getValue());
        }
        String withUser = uri;
        if (options.username() != null || options.password() != null) {
            int start = uri.indexOf("://");
            if (start < 0) {
                throw new IllegalArgumentException("not a hierarchical URI, cannot add credentials: " + uri);
            }
            String userInfo = encode(options.username() == null ? "" : options.username())
                    + (options.password() == null ? "" : ":" + encode(options.password()));
            withUser = uri.substring(0, start + 3) + userInfo + "@" + uri.substring(start + 3);
        }
        return withUser + (withUser.contains("?") ? "&" : "?") + query;
    }

    private static void append(StringBuilder query, String name, String value) {
        if (query.length() > 0) {
            query.append('&');
        }
        query.append(name).append('=').append(encode(value));
    }

    private static String millis(Duration d) {
        return d.toMillis() + "ms";
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
