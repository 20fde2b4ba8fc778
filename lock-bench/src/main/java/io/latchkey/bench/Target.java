package io.latchkey.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The server a backend's variants share in one run: its connection URI without a query, and the
 * lease every variant is given (Latchkey's {@code lease}, Redisson's watchdog timeout, Curator's session
 * timeout, the etcd lease TTL, Kafka's {@code session.timeout.ms}, ShedLock's
 * {@code lockAtMostFor}, JdbcLockRegistry's TTL).
 */
record Target(String uri, Duration lease, Duration timeout) {

    /** The {@code host:port} pairs of the URI. */
    List<String> hostPorts() {
        String rest = uri.substring(uri.indexOf("://") + 3);
        int at = rest.lastIndexOf('@');
        if (at >= 0) {
            rest = rest.substring(at + 1);
        }
        int end = rest.length();
        for (char c : new char[] {'/', '?'}) {
            int i = rest.indexOf(c);
            if (i >= 0 && i < end) {
                end = i;
            }
        }
        List<String> out = new ArrayList<>();
        for (String h : rest.substring(0, end).split(",")) {
            if (!h.isBlank()) {
                out.add(h.trim());
            }
        }
        return out;
    }

    /** The URI with Latchkey's lease and timeout options. */
    String latchkeyUri() {
        return uri + (uri.contains("?") ? "&" : "?") + "lease=" + lease.toMillis() + "ms&timeout=" + timeout.toMillis() + "ms";
    }
}
