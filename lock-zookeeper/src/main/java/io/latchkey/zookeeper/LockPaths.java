package io.latchkey.zookeeper;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.apache.zookeeper.common.PathUtils;

/**
 * Maps lock names to ZooKeeper node names and checks base paths. Stateless and thread-safe.
 *
 * <p>A lock name becomes one node name: the bytes of its UTF-8 form outside {@code [A-Za-z0-9._-]}
 * are percent-encoded ({@code report:nightly} becomes {@code report%3Anightly}), and a name that is
 * exactly {@code .} or {@code ..} has its dots encoded, since ZooKeeper refuses those. Percent-encoding
 * with {@code %} itself encoded is reversible, so different names never share a node. An encoding
 * longer than {@value #MAX_PLAIN} characters (a long name of non-Latin characters can reach 2,295)
 * becomes its first {@value #KEPT} characters, {@code ~} and the SHA-256 of the name in hex: the
 * short form never contains {@code ~} (it is encoded as {@code %7E}) and is never that long, so the
 * two forms cannot meet, and two long names share a node only if SHA-256 collides.
 *
 * <p>Semaphores live in the subtree {@value #SEMAPHORES} under the base path, their names mapped the
 * same way below it. No lock name maps to that node: {@code @} is always encoded ({@code @semaphores}
 * as a lock name is {@code %40semaphores}), so a lock and a semaphore of one name never share a node.
 * Read-write locks live in the subtree {@value #READ_WRITE} beside it, for the same reason.
 *
 * <p>{@link #lockName} reads a node name back: only the short form can be, since the long form keeps
 * no more than the hash of the name's end.
 */
final class LockPaths {

    /** The base path when neither the URI's path nor the namespace option gives one. */
    static final String DEFAULT_BASE = "/latchkey";
    /** The node under the base path that holds the semaphores: a name no lock name maps to. */
    static final String SEMAPHORES = "@semaphores";
    /** The node under the base path that holds the read-write locks: a name no lock name maps to. */
    static final String READ_WRITE = "@rw";
    static final int MAX_PLAIN = 200;
    static final int KEPT = 120;
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private LockPaths() {
    }

    /** The node name of a (valid) lock name under the base path. */
    static String nodeName(String lockName) {
        byte[] bytes = lockName.getBytes(StandardCharsets.UTF_8);
        StringBuilder b = new StringBuilder(bytes.length * 3);
        boolean dotsOnly = lockName.equals(".") || lockName.equals("..");
        for (byte x : bytes) {
            int c = x & 0xff;
            boolean safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '_' || (c == '.' && !dotsOnly);
            if (safe) {
                b.append((char) c);
            } else {
                b.append('%').append(HEX[c >> 4]).append(HEX[c & 0xf]);
            }
        }
        if (b.length() <= MAX_PLAIN) {
            return b.toString();
        }
        int cut = KEPT;
        // never cut a %XX escape in half, so the kept prefix stays readable
        if (b.charAt(cut - 1) == '%') {
            cut -= 1;
        } else if (b.charAt(cut - 2) == '%') {
            cut -= 2;
        }
        return b.substring(0, cut) + '~' + sha256(bytes);
    }

    /**
     * The lock name whose node is {@code nodeName}, or {@code null} if none maps to it: the long form
     * (the name is not kept whole), the subtrees of semaphores and read-write locks, and any node name
     * not written by {@link #nodeName}, such as another client's node under the base path.
     */
    static String lockName(String nodeName) {
        if (isHashed(nodeName)) {
            return null;
        }
        byte[] bytes = new byte[nodeName.length()];
        int n = 0;
        for (int i = 0; i < nodeName.length(); i++) {
            char c = nodeName.charAt(i);
            if (c == '%' && i + 2 < nodeName.length() && hex(nodeName.charAt(i + 1)) >= 0
                    && hex(nodeName.charAt(i + 2)) >= 0) {
                bytes[n++] = (byte) (hex(nodeName.charAt(i + 1)) << 4 | hex(nodeName.charAt(i + 2)));
                i += 2;
            } else if (c < 0x80) {
                bytes[n++] = (byte) c;
            } else {
                return null; // nodeName never leaves a non-ASCII character unencoded
            }
        }
        String name;
        try {
            name = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes, 0, n)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
        // the one encoding of each name: what maps back to another node name is not a lock's node
        return !name.isEmpty() && nodeName(name).equals(nodeName) ? name : null;
    }

    /** Whether {@code nodeName} is the long form, which keeps the start of the name and a hash of all of it. */
    static boolean isHashed(String nodeName) {
        return nodeName.indexOf('~') >= 0;
    }

    private static int hex(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    }

    /**
     * The base path for a URI path and a namespace: the namespace, if set, is a prefix of the path;
     * with neither, {@value #DEFAULT_BASE}.
     *
     * @throws IllegalArgumentException if the result is not a legal ZooKeeper path, is the root, or lies
     *     under ZooKeeper's own {@code /zookeeper}
     */
    static String basePath(String uriPath, String namespace) {
        String path = uriPath == null ? "" : uriPath;
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        if (path.isEmpty()) {
            path = DEFAULT_BASE;
        }
        if (namespace != null) {
            String ns = namespace.startsWith("/") ? namespace : "/" + namespace;
            while (ns.endsWith("/")) {
                ns = ns.substring(0, ns.length() - 1);
            }
            path = ns + path;
        }
        try {
            PathUtils.validatePath(path);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("zookeeper base path '" + path + "' (from the URI's path and the namespace"
                    + " option) is not a legal ZooKeeper path: " + e.getMessage(), e);
        }
        if (path.equals("/zookeeper") || path.startsWith("/zookeeper/")) {
            throw new IllegalArgumentException("zookeeper base path '" + path + "' lies under /zookeeper, which ZooKeeper"
                    + " reserves for itself; choose another path, such as " + DEFAULT_BASE);
        }
        return path;
    }

    private static String sha256(byte[] bytes) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(bytes);
            StringBuilder b = new StringBuilder(d.length * 2);
            for (byte x : d) {
                b.append(HEX[(x >> 4) & 0xf]).append(HEX[x & 0xf]);
            }
            return b.toString().toLowerCase(java.util.Locale.ROOT);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
