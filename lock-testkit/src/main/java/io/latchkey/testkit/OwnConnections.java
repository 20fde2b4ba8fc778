package io.latchkey.testkit;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The TCP connections this JVM holds to a server's ports, read from Linux's {@code /proc}: a socket
 * counts only if one of this process's file descriptors is that socket, so the connections of child
 * JVMs, of Docker's port proxy and of other processes on the machine never count.
 *
 * <p>Rule 10 compares a snapshot taken before a client was made with one taken after it was closed.
 * Thread-safe: every call reads {@code /proc} afresh.
 */
final class OwnConnections {

    private static final Path FDS = Path.of("/proc/self/fd");
    private static final List<Path> TABLES = List.of(Path.of("/proc/self/net/tcp"), Path.of("/proc/self/net/tcp6"));
    private static final String LISTEN = "0A";

    private OwnConnections() {
    }

    /** Whether this machine lets a process list its own sockets (Linux). */
    static boolean readable() {
        return Files.isDirectory(FDS) && Files.isReadable(TABLES.get(0));
    }

    /**
     * This process's connections whose remote port is one of {@code servers}' ports, each as
     * {@code local -> remote (state, inode)}; sorted.
     */
    static Set<String> to(Collection<InetSocketAddress> servers) {
        Set<Integer> ports = new HashSet<>();
        servers.forEach(a -> ports.add(a.getPort()));
        Set<String> inodes = ownSocketInodes();
        Set<String> found = new TreeSet<>();
        for (Path table : TABLES) {
            List<String> lines;
            try {
                lines = Files.exists(table) ? Files.readAllLines(table) : List.of();
            } catch (IOException e) {
                throw new IllegalStateException("cannot read " + table + " to count this JVM's connections", e);
            }
            for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
                String[] f = line.trim().split("\\s+");
                if (f.length < 10 || f[3].equals(LISTEN) || !inodes.contains(f[9])) {
                    continue;
                }
                int remotePort = Integer.parseInt(f[2].substring(f[2].indexOf(':') + 1), 16);
                if (ports.contains(remotePort)) {
                    found.add(port(f[1]) + " -> " + remotePort + " (state " + f[3] + ", inode " + f[9] + ")");
                }
            }
        }
        return found;
    }

    private static String port(String address) {
        return "local port " + Integer.parseInt(address.substring(address.indexOf(':') + 1), 16);
    }

    private static Set<String> ownSocketInodes() {
        Set<String> inodes = new HashSet<>();
        List<Path> fds = new ArrayList<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(FDS)) {
            dir.forEach(fds::add);
        } catch (IOException e) {
            throw new IllegalStateException("cannot list " + FDS + " to count this JVM's connections", e);
        }
        for (Path fd : fds) {
            try {
                String target = Files.readSymbolicLink(fd).toString();
                if (target.startsWith("socket:[")) {
                    inodes.add(target.substring("socket:[".length(), target.length() - 1));
                }
            } catch (IOException | UnsupportedOperationException e) {
                // the descriptor was closed while we listed them: not a connection of ours any more
            }
        }
        return inodes;
    }
}
