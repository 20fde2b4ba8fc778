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
    /** Per thread: the name last seen and its text. */
    private static final ThreadLocal<String[]> THREAD_TEXT = ThreadLocal.withInitial(() -> new String[2]);

    private final String owner;
    private final Instant clientStarted = Instant.now();
    /** {@link Holder#toString()} up to the thread's name, which is all of it that is the same for every grant. */
    private final String head;
    /** The second of the last request and its text without the fraction: one formatting per second, not per grant. */
    private volatile Second second = new Second(Long.MIN_VALUE, "");

    public HolderStamp(LockOptions options) {
        this.owner = options.owner();
        this.head = new Holder(owner, clientStarted, "").toString(); // ends with "thread=": the name comes last
    }

    /**
     * The text of the holder of a grant requested now, on the current thread, with the moment of the
     * request: {@code Holder.ofCurrentThread(owner, started) + " at=" + Instant.now()}, built without
     * formatting what is the same from one grant to the next.
     */
    public String forCurrentThread() {
        return head + threadText() + " " + AT + instantText(Instant.now());
    }

    /** The current thread's name as {@link Holder#toString()} writes it, encoded again only once the thread is renamed. */
    private static String threadText() {
        String name = Thread.currentThread().getName();
        String[] last = THREAD_TEXT.get();
        if (last[0] != name) { // the same String until the thread is renamed
            String text = new Holder("", Instant.EPOCH, name).toString();
            last[1] = text.substring(text.lastIndexOf(" thread=") + " thread=".length());
            last[0] = name;
        }
        return last[1];
    }

    /** {@code now.toString()}: the date and time of its second, once per second, and its fraction as {@link Instant#toString()} writes it. */
    String instantText(Instant now) {
        long epochSecond = now.getEpochSecond();
        Second last = second;
        if (last.epochSecond != epochSecond) {
            String whole = Instant.ofEpochSecond(epochSecond).toString();
            if (!whole.endsWith("Z") || whole.length() != "2026-01-01T00:00:00Z".length()) {
                return now.toString(); // a year outside 0000 to 9999: the formatter's own way
            }
            last = new Second(epochSecond, whole.substring(0, whole.length() - 1));
            second = last;
        }
        int nanos = now.getNano();
        if (nanos == 0) {
            return last.text + "Z";
        }
        // as ISO_INSTANT: the nanoseconds in groups of three digits, as many groups as needed
        int digits = nanos % 1_000_000 == 0 ? 3 : nanos % 1_000 == 0 ? 6 : 9;
        int fraction = digits == 3 ? nanos / 1_000_000 : digits == 6 ? nanos / 1_000 : nanos;
        StringBuilder b = new StringBuilder(last.text.length() + 11).append(last.text).append('.');
        String number = Integer.toString(fraction);
        for (int pad = digits - number.length(); pad > 0; pad--) {
            b.append('0');
        }
        return b.append(number).append('Z').toString();
    }

    private static final class Second {
        final long epochSecond;
        final String text;

        Second(long epochSecond, String text) {
            this.epochSecond = epochSecond;
            this.text = text;
        }
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
