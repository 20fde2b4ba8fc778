package io.latchkey.spi;

import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The parts of a connection URI a backend needs: scheme, hosts and path. Query options and
 * credentials have already been moved into {@link io.latchkey.LockOptions}.
 *
 * @param scheme the scheme, in lower case
 * @param hosts at least one host, in the order given
 * @param path the decoded path, empty if there was none; never {@code null}
 * @param redacted the URI as given with any password replaced by {@code ****}, for messages
 */
public record LockUri(String scheme, List<HostAndPort> hosts, String path, String redacted) {

    public LockUri {
        Objects.requireNonNull(scheme, "scheme");
        hosts = List.copyOf(hosts);
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(redacted, "redacted");
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("a lock URI needs at least one host: " + redacted);
        }
    }

    /**
     * Parses {@code uri} the way {@link io.latchkey.LockClient#connect(String)} does, without
     * connecting: the scheme, hosts and path for {@code provider}, and {@code base} with the URI's
     * query and credentials applied and checked against the shared options and
     * {@link LockProviderFactory#backendOptions()}. For a backend's own tests of its URI forms.
     *
     * @throws IllegalArgumentException quoting the bad part, with the password redacted
     */
    public static Parsed parse(String uri, io.latchkey.LockOptions base, LockProviderFactory provider) {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(base, "base");
        Objects.requireNonNull(provider, "provider");
        return UriParser.parse(uri.trim(), base, provider);
    }

    /**
     * The scheme of {@code uri} in lower case, by which {@link io.latchkey.LockClient#connect(String)}
     * chooses the backend.
     *
     * @throws IllegalArgumentException if {@code uri} has no scheme, quoting it with the password redacted
     */
    public static String schemeOf(String uri) {
        return UriParser.scheme(Objects.requireNonNull(uri, "uri").trim());
    }

    /**
     * {@code uri} with the password of its user info replaced by {@code ****}, as every message of
     * {@link io.latchkey.LockClient#connect(String)} shows it: for tools that show a URI or hand it on.
     */
    public static String redact(String uri) {
        return UriParser.redact(Objects.requireNonNull(uri, "uri"));
    }

    /**
     * The schemes that the providers on the class path serve, in order: those
     * {@link io.latchkey.LockClient#connect(String)} chooses among, found through the current thread's
     * context class loader (else lock-api's), as it finds them. For tools that tell an unknown scheme
     * from a backend that failed before connecting.
     *
     * @throws io.latchkey.LockException if a provider on the class path cannot be loaded
     */
    public static SortedSet<String> servedSchemes() {
        SortedSet<String> schemes = new TreeSet<>();
        for (LockProviderFactory provider : LockProviderFactory.installed(LockProviderFactory.discoveryLoader())) {
            schemes.addAll(provider.schemes());
        }
        return Collections.unmodifiableSortedSet(schemes);
    }

    /** A parsed URI: what the backend needs of it, and the options with its query applied. */
    public record Parsed(LockUri uri, io.latchkey.LockOptions options) {

        public Parsed {
            Objects.requireNonNull(uri, "uri");
            Objects.requireNonNull(options, "options");
        }
    }

    /** A host and port. */
    public record HostAndPort(String host, int port) {

        public HostAndPort {
            Objects.requireNonNull(host, "host");
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port must be between 1 and 65535: " + port);
            }
        }

        @Override
        public String toString() {
            return (host.indexOf(':') >= 0 ? '[' + host + ']' : host) + ':' + port;
        }
    }
}
