package io.latchkey.spi;

import io.latchkey.Holder;
import io.latchkey.LockOptions;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/**
 * The {@link Holder} text a backend writes with each grant: the client's owner id and the moment the
 * backend was made (the client's start), with the name of the thread that acquires. A backend makes one
 * in its constructor and calls {@link #forCurrentThread()} as it builds the grant's request, so the
 * identity travels in the request that grants and costs no round trip of its own.
 *
 * <p>The text ends with the moment of the request, by the client's clock ({@code at=<instant>}), a field
 * {@link Holder#parse} passes over: a backend that records no time of its own tells since when a grant is
 * held from it ({@link #requestedAt}).
 *
 * <p>Thread-safe.
 */
public final class HolderStamp {

    private static final String AT = "at=";

    private final String owner;
    private final Instant clientStarted = Instant.now();
    /** Per thread: its name when last asked, and this client's {@link Holder} text for that name. */
    private final ThreadLocal<String[]> holderText = ThreadLocal.withInitial(() -> new String[2]);

    public HolderStamp(LockOptions options) {
        this.owner = options.owner();
    }

    /**
     * The text of the holder of a grant requested now, on the current thread, with the moment of the
     * request: the {@link Holder} text is made once per thread and thread name, not for every grant.
     */
    public String forCurrentThread() {
        String name = Thread.currentThread().getName();
        String[] last = holderText.get();
        if (last[0] != name) { // the same String until the thread is renamed
            last[1] = new Holder(owner, clientStarted, name).toString();
            last[0] = name;
        }
        return last[1] + " " + AT + Instant.now();
    }

    /**
     * The moment of the request that {@code text} (of {@link #forCurrentThread()}) was written with; empty
     * for text without one (null, an older Latchkey's, another writer's) or with one that is not an instant.
     */
    public static Optional<Instant> requestedAt(String text) {
        if (text == null || !text.startsWith("owner=")) {
            return Optional.empty();
        }
        for (String field : text.split(" ")) {
            if (field.startsWith(AT)) {
                try {
                    return Optional.of(Instant.parse(field.substring(AT.length())));
                } catch (DateTimeParseException e) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    /** The client's owner id. */
    public String owner() {
        return owner;
    }
}
