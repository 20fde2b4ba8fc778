package io.latchkey;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Objects;
import java.util.Optional;

/**
 * Who holds a grant: written with every grant, on the backend, where the grant is kept, so that any
 * client can say who holds a lock or leads an election ({@link DistributedLock#inspect()},
 * {@link Election#leader()}), and an operator reading the backend by eye can too.
 *
 * <p>{@code owner} is the {@link LockOptions#owner() owner} option of the holder's client (by default
 * {@code <hostname>:<pid>}); {@code clientStarted} is when that client was connected, on its own clock,
 * which tells a restarted process from the one before it; {@code thread} is the name of the thread that
 * acquired the grant at the backend (for {@link DistributedLock#tryLockAsync} and elections, a thread of
 * the library).
 *
 * <p>On the backend it is one line of text, {@link #toString()}:
 * {@code owner=web-1:4242 started=2026-12-05T07:30:00.123Z thread=scheduling-1}, each value
 * URL-encoded so that no value holds a space; {@link #parse} reads it back. A backend writes it followed by
 * the moment of the request that became the grant ({@code at=<instant>}, see
 * {@link io.latchkey.spi.HolderStamp}), which {@link #parse} passes over.
 *
 * @param owner the holder's owner id
 * @param clientStarted when the holder's client connected, by the holder's clock
 * @param thread the name of the thread that acquired the grant
 */
public record Holder(String owner, Instant clientStarted, String thread) {

    /**
     * The holder of a grant whose writer recorded no identity: a client of an older Latchkey, or a
     * Redisson client on the same Redis key. Its owner is {@code unknown}.
     */
    public static final Holder UNKNOWN = new Holder("unknown", Instant.EPOCH, "");

    /** The longest owner id accepted, in characters: it is written with every grant. */
    public static final int MAX_OWNER_LENGTH = 200;

    /** The longest thread name written; a longer one is cut, since it only helps a reader. */
    static final int MAX_THREAD_LENGTH = 100;

    public Holder {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(clientStarted, "clientStarted");
        Objects.requireNonNull(thread, "thread");
        if (thread.length() > MAX_THREAD_LENGTH) {
            thread = thread.substring(0, MAX_THREAD_LENGTH);
        }
    }

    /** The holder of a grant the current thread acquires, for a client of {@code owner} connected at {@code clientStarted}. */
    public static Holder ofCurrentThread(String owner, Instant clientStarted) {
        return new Holder(owner, clientStarted, Thread.currentThread().getName());
    }

    /**
     * The default owner id: {@code <hostname>:<pid>}. The host name is the kernel's
     * ({@code /proc/sys/kernel/hostname} on Linux, else {@code HOSTNAME} or {@code COMPUTERNAME} in the
     * environment), and only where none is found the name {@link InetAddress#getLocalHost()} gives, or
     * {@code localhost}: that call looks the host up in DNS, which on a host whose name does not resolve
     * stalls the first connect for the resolver's timeout.
     */
    public static String defaultOwner() {
        return hostName() + ":" + ProcessHandle.current().pid();
    }

    private static String hostName() {
        try {
            String kernel = Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
            if (!kernel.isEmpty()) {
                return kernel;
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: the environment or the resolver below
        }
        for (String variable : new String[] {"HOSTNAME", "COMPUTERNAME"}) {
            String value = System.getenv(variable);
            if (value != null && !value.isBlank()) {
                return value.strip();
            }
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }

    /**
     * Checks an owner id: not empty, at most {@link #MAX_OWNER_LENGTH} characters, no control
     * characters (it is one line on the backend and in logs).
     *
     * @return {@code owner}
     * @throws IllegalArgumentException naming the value and the rule it broke
     */
    public static String checkOwner(String owner) {
        Objects.requireNonNull(owner, "owner");
        if (owner.isBlank()) {
            throw new IllegalArgumentException("owner must not be blank: '" + owner
                    + "'; leave it unset for the default <hostname>:<pid>");
        }
        if (owner.length() > MAX_OWNER_LENGTH) {
            throw new IllegalArgumentException("owner must be at most " + MAX_OWNER_LENGTH + " characters: '"
                    + owner.substring(0, 40) + "...' has " + owner.length() + "; it is written with every grant");
        }
        for (int i = 0; i < owner.length(); i++) {
            if (Character.isISOControl(owner.charAt(i))) {
                throw new IllegalArgumentException("owner must not hold control characters: '"
                        + owner.replaceAll("\\p{Cntrl}", "?") + "' has one at index " + i
                        + "; it is written as one line with every grant");
            }
        }
        return owner;
    }

    /**
     * The text written on the backend: {@code owner=... started=... thread=...}, values URL-encoded.
     */
    @Override
    public String toString() {
        return "owner=" + encode(owner) + " started=" + clientStarted + " thread=" + encode(thread);
    }

    /**
     * Reads the text of {@link #toString()} back; empty if {@code text} is not one (null, another
     * writer's value, a format of a later version that lacks a field this one needs). Fields it does not
     * know are skipped, so that a later version may add some.
     */
    public static Optional<Holder> parse(String text) {
        if (text == null || !text.startsWith("owner=")) {
            return Optional.empty();
        }
        String owner = null;
        Instant started = null;
        String thread = null;
        try {
            for (String field : text.split(" ")) {
                int eq = field.indexOf('=');
                if (eq < 0) {
                    continue;
                }
                String value = field.substring(eq + 1);
                switch (field.substring(0, eq)) {
                    case "owner" -> owner = decode(value);
                    case "started" -> started = Instant.parse(value);
                    case "thread" -> thread = decode(value);
                    default -> {
                        // a field of a later version
                    }
                }
            }
        } catch (DateTimeParseException | IllegalArgumentException e) {
            return Optional.empty();
        }
        if (owner == null || started == null || thread == null) {
            return Optional.empty();
        }
        return Optional.of(new Holder(owner, started, thread));
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }
}
