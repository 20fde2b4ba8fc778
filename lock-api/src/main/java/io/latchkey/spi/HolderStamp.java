package io.latchkey.spi;

import io.latchkey.Holder;
import io.latchkey.LockOptions;
import java.time.Instant;

/**
 * The {@link Holder} text a backend writes with each grant: the client's owner id and the moment the
 * backend was made (the client's start), with the name of the thread that acquires. A backend makes one
 * in its constructor and calls {@link #forCurrentThread()} as it builds the grant's request, so the
 * identity travels in the request that grants and costs no round trip of its own.
 *
 * <p>Thread-safe.
 */
public final class HolderStamp {

    private final String owner;
    private final Instant clientStarted = Instant.now();

    public HolderStamp(LockOptions options) {
        this.owner = options.owner();
    }

    /** The text of the holder of a grant acquired now, on the current thread. */
    public String forCurrentThread() {
        return Holder.ofCurrentThread(owner, clientStarted).toString();
    }

    /** The client's owner id. */
    public String owner() {
        return owner;
    }
}
