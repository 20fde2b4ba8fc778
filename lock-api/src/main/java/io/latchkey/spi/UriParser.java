package io.latchkey.spi;

import io.latchkey.LockOptions;
import io.latchkey.spi.LockUri.HostAndPort;
import java.net.URLDecoder;
import java.time.Duration;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * Parses {@code scheme://[user[:password]@]host[:port][,host[:port]...][/path][?option=value&...]}.
 * Several hosts, some of them IPv6 addresses in brackets, are more than {@link java.net.URI} parses,
 * so the text is split here.
 * Every error quotes the bad part and the URI with its password hidden.
 */
final class UriParser {

    /** The option names every backend understands. */
    static final Set<String> SHARED_OPTIONS = Set.of("lease", "safetyMargin", "timeout", "namespace", "owner");

    private UriParser() {
    }

    private static final java.util.regex.Pattern SCHEME = java.util.regex.Pattern.compile("[A-Za-z][A-Za-z0-9+.-]*");

    /** The scheme of {@code uri} in lower case. */
    static String scheme(String uri) {
        int sep = uri.indexOf("://");
        String scheme = sep > 0 ? uri.substring(0, sep) : "";
        if (!SCHEME.matcher(scheme).matches()) {
            throw new IllegalArgumentException("lock URI '" + redact(uri)
                    + "' has no scheme; write it like redis://host:6379 or zookeeper://host:2181/locks");
        }
        return scheme.toLowerCase(Locale.ROOT);
    }

    /**
     * Parses {@code uri} as text: {@link URI} cannot hold a list of hosts with bracketed IPv6
     * addresses, so the string is split here.
     */
    static LockUri.Parsed parse(String uri, LockOptions base, LockProviderFactory provider) {
        String scheme = scheme(uri);
        String shown = redact(uri);
        if (uri.indexOf('#') >= 0) {
            throw new IllegalArgumentException("lock URI '" + shown + "' must not have a fragment ('#...')");
        }
        for (int i = 0; i < uri.length(); i++) {
            char c = uri.charAt(i);
            if (c <= ' ' || c == 0x7f) {
                throw new IllegalArgumentException("malformed lock URI '" + shown + "': white space or a control character"
                        + " at index " + i + "; percent-encode it");
            }
        }
        String rest = uri.substring(scheme.length() + 3);
        int q = rest.indexOf('?');
        String query = q >= 0 ? rest.substring(q + 1) : "";
        String beforeQuery = q >= 0 ? rest.substring(0, q) : rest;
        int slash = beforeQuery.indexOf('/');
        String authority = slash >= 0 ? beforeQuery.substring(0, slash) : beforeQuery;
        String path = slash >= 0 ? decodePath(beforeQuery.substring(slash)) : "";
        if (authority.isEmpty()) {
            throw new IllegalArgumentException("lock URI '" + shown + "' names no host; write it as " + scheme + "://host:port");
        }
        LockOptions.Builder options = base.toBuilder();
        int at = authority.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = authority.substring(0, at);
            authority = authority.substring(at + 1);
            int colon = userInfo.indexOf(':');
            String user = decode(colon >= 0 ? userInfo.substring(0, colon) : userInfo);
            String password = colon >= 0 ? decode(userInfo.substring(colon + 1)) : null;
            options.credentials(user.isEmpty() ? null : user, password);
        }
        List<HostAndPort> hosts = new ArrayList<>();
        for (String part : authority.split(",", -1)) {
            hosts.add(host(part, scheme, shown, provider));
        }
        LockOptions built;
        try {
            if (!query.isEmpty()) {
                query(query, options, provider, shown);
            }
            built = options.build();
        } catch (IllegalArgumentException e) {
            if (e.getMessage() != null && e.getMessage().contains(shown)) {
                throw e;
            }
            throw new IllegalArgumentException(e.getMessage() + " (lock URI '" + shown + "')", e);
        }
        checkBackendOptions(built, provider, "lock URI '" + shown + "'");
        checkLeaseAgainstTimeout(built, "lock URI '" + shown + "'");
        return new LockUri.Parsed(new LockUri(scheme, hosts, path, shown), built);
    }

    /**
     * Refuses a lease no longer than {@code timeout + safetyMargin}, on every backend: a holder's validity
     * runs from before a renewal (keepalive, heartbeat, check script) whose answer may take the whole
     * timeout, minus the margin; with a shorter lease the answer would arrive after the lease was invalid,
     * and every lease would be lost at its first renewal. Backends add their own minimums on top.
     */
    static void checkLeaseAgainstTimeout(LockOptions options, String where) {
        Duration needed = options.timeout().plus(options.safetyMargin());
        if (options.lease().compareTo(needed) <= 0) {
            throw new IllegalArgumentException("lease=" + Durations.format(options.lease()) + " for " + where
                    + " must be longer than timeout=" + Durations.format(options.timeout()) + " plus safetyMargin="
                    + Durations.format(options.safetyMargin()) + " (" + Durations.format(needed) + "), so that a renewal"
                    + " answered within the timeout still finds the lease valid; lengthen the lease or shorten the timeout");
        }
    }

    /**
     * Refuses backend options that {@code provider} does not declare, wherever they were set: a typo in
     * code ({@code backendOption("leese", ...)}) must fail as loudly as the same typo in a URI.
     */
    static void checkBackendOptions(LockOptions options, LockProviderFactory provider, String where) {
        for (String name : options.backendOptions().keySet()) {
            requireKnown(name, provider, "given in code for " + where);
        }
    }

    /**
     * The one rule of option names: an option that is not shared must be one {@code provider} declares,
     * or it is refused, naming it, where it was given ({@code given}) and the known options.
     */
    private static void requireKnown(String name, LockProviderFactory provider, String given) {
        if (!provider.backendOptions().contains(name)) {
            Set<String> known = new TreeSet<>(SHARED_OPTIONS);
            known.addAll(provider.backendOptions());
            throw new IllegalArgumentException("unknown option '" + name + "' " + given + "; known options: "
                    + String.join(", ", known));
        }
    }

    private static HostAndPort host(String part, String scheme, String shown, LockProviderFactory provider) {
        if (part.isEmpty()) {
            throw new IllegalArgumentException("empty host in lock URI '" + shown + "'; list hosts as host1:port,host2:port");
        }
        String host;
        String port = null;
        if (part.startsWith("[")) {
            int close = part.indexOf(']');
            if (close < 0) {
                throw new IllegalArgumentException("malformed host '" + part + "' in lock URI '" + shown + "': missing ']'");
            }
            host = part.substring(1, close);
            String rest = part.substring(close + 1);
            if (!rest.isEmpty()) {
                if (!rest.startsWith(":")) {
                    throw new IllegalArgumentException("malformed host '" + part + "' in lock URI '" + shown + "'");
                }
                port = rest.substring(1);
            }
        } else {
            int colon = part.indexOf(':');
            if (colon >= 0 && part.indexOf(':', colon + 1) >= 0) {
                throw new IllegalArgumentException("malformed host '" + part + "' in lock URI '" + shown
                        + "': write IPv6 addresses in brackets, like [::1]:2181");
            }
            host = colon >= 0 ? part.substring(0, colon) : part;
            port = colon >= 0 ? part.substring(colon + 1) : null;
        }
        if (host.isEmpty() || !host.matches("[A-Za-z0-9._\\-:%]+")) {
            throw new IllegalArgumentException("malformed host '" + part + "' in lock URI '" + shown + "'");
        }
        int number;
        if (port == null) {
            number = provider.defaultPort(scheme);
        } else {
            try {
                number = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                number = -1;
            }
            if (number < 1 || number > 65535) {
                throw new IllegalArgumentException("bad port '" + port + "' in host '" + part + "' of lock URI '" + shown
                        + "': a port is a number from 1 to 65535");
            }
        }
        return new HostAndPort(host, number);
    }

    private static void query(String raw, LockOptions.Builder options, LockProviderFactory provider, String shown) {
        Set<String> seen = new LinkedHashSet<>();
        for (String pair : raw.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String name = decode(eq >= 0 ? pair.substring(0, eq) : pair);
            if (eq < 0 || eq == pair.length() - 1) {
                throw new IllegalArgumentException("option '" + name + "' has no value in lock URI '" + shown + "'");
            }
            String value = decode(pair.substring(eq + 1));
            if (!seen.add(name)) {
                throw new IllegalArgumentException("option '" + name + "' is given twice in lock URI '" + shown + "'");
            }
            switch (name) {
                case "lease":
                    options.lease(Durations.parse(name, value));
                    break;
                case "safetyMargin":
                    options.safetyMargin(Durations.parse(name, value));
                    break;
                case "timeout":
                    options.timeout(Durations.parse(name, value));
                    break;
                case "namespace":
                    options.namespace(value);
                    break;
                case "owner":
                    options.owner(value);
                    break;
                default:
                    requireKnown(name, provider, "in lock URI '" + shown + "'");
                    options.backendOption(name, value);
            }
        }
    }

    private static String decodePath(String s) {
        return decode(s);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** The URI with the password of its user info replaced by {@code ****}. */
    static String redact(String uri) {
        return uri.replaceFirst("(//[^/@:?#]*:)[^/@?#]*@", "$1****@");
    }
}
