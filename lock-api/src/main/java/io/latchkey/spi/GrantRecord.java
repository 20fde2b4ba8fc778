package io.latchkey.spi;

import io.latchkey.GrantTime;
import java.time.Duration;

/**
 * What a backend records of a lock's current grant, read by {@link LockBackend#inspect}: the text of
 * the {@link io.latchkey.Holder} written with it, its fencing token, and how long the backend keeps it
 * for a silent holder from the moment of the read.
 *
 * @param holder the text the grant carries where this backend writes the holder
 *     ({@link io.latchkey.Holder#toString()}, from a {@link HolderStamp}), as read, or {@code null} if it
 *     carries none; the shared layer reads the {@link io.latchkey.Holder} from it, and takes text that is
 *     none (a grant of an older Latchkey, of Redisson, of a plain Curator mutex) as an unknown holder
 * @param token the grant's fencing token, or {@code -1} if the backend cannot read it back
 * @param expiresIn how long the backend still keeps the grant for a silent holder, as it reports it
 *     (a key's TTL, a lease's TTL, a session's timeout), or {@code null} if it does not say
 * @param waiters how many requests of other holders wait behind the grant, as the backend's queue or
 *     group shows them at the read, or {@code -1} if the backend does not say
 * @param since when the backend recorded the grant, or the request that became it, by its own clock; or
 *     {@code null} if it records no time, and the shared layer then takes the moment the holder wrote with
 *     its request ({@link HolderStamp#requestedAt})
 */
public record GrantRecord(String holder, long token, Duration expiresIn, int waiters, GrantTime since) {

    public GrantRecord {
        if (token < -1) {
            throw new IllegalArgumentException("token must be -1 (unknown) or a token: " + token);
        }
        if (waiters < -1) {
            throw new IllegalArgumentException("waiters must be -1 (unknown) or a count: " + waiters);
        }
        if (expiresIn != null && expiresIn.isNegative()) {
            expiresIn = Duration.ZERO;
        }
    }

    /** A grant whose waiters the backend does not count, and whose time it does not record. */
    public GrantRecord(String holder, long token, Duration expiresIn) {
        this(holder, token, expiresIn, -1, null);
    }

    /** A grant whose time the backend does not record. */
    public GrantRecord(String holder, long token, Duration expiresIn, int waiters) {
        this(holder, token, expiresIn, waiters, null);
    }
}
