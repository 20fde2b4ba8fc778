package io.latchkey.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * What a backend records of a lock's current grant, read by {@link LockBackend#inspect}: the text of
 * the {@link io.latchkey.Holder} written with it, its fencing token, and how long the backend keeps it
 * for a silent holder from the moment of the read.
 *
 * @param holder the holder text as written ({@link io.latchkey.Holder#toString()}), or {@code null} if
 *     the grant carries none (its writer wrote no identity)
 * @param token the grant's fencing token, or {@code -1} if the backend cannot read it back
 * @param expiresIn how long the backend still keeps the grant for a silent holder, as it reports it
 *     (a key's TTL, a lease's TTL, a session's timeout), or {@code null} if it does not say
 */
public record GrantRecord(String holder, long token, Duration expiresIn) {

    public GrantRecord {
        if (token < -1) {
            throw new IllegalArgumentException("token must be -1 (unknown) or a token: " + token);
        }
        if (expiresIn != null && expiresIn.isNegative()) {
            expiresIn = Duration.ZERO;
        }
    }

    /** A grant with {@code holder} and {@code token} and no expiry the backend reports. */
    public static GrantRecord of(String holder, long token) {
        return new GrantRecord(holder, token, null);
    }

    /** This record with {@code expiresIn}. */
    public GrantRecord expiringIn(Duration expiresIn) {
        return new GrantRecord(holder, token, Objects.requireNonNull(expiresIn, "expiresIn"));
    }
}
