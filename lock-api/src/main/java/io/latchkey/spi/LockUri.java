package io.latchkey.spi;

import java.util.List;
import java.util.Objects;

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
