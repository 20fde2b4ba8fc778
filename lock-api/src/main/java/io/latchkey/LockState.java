package io.latchkey;

import io.latchkey.spi.Durations;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * What the backend records of a lock at one moment, from {@link DistributedLock#inspect()}: whether it
 * is held, by whom, since when, under which fencing token, and how long the backend keeps it for a holder
 * that goes silent. A snapshot: by the time it is read the lock may have changed hands.
 *
 * <p>Immutable and thread-safe.
 */
public final class LockState {

    private final String name;
    private final Holder holder;
    private final long token;
    private final Duration expiresIn;
    private final int waiters;
    private final GrantTime since;

    private LockState(String name, Holder holder, long token, Duration expiresIn, int waiters, GrantTime since) {
        this.name = Objects.requireNonNull(name, "name");
        this.holder = holder;
        this.token = token;
        this.expiresIn = expiresIn;
        this.waiters = waiters;
        this.since = since;
    }

    /** A lock nobody holds. */
    public static LockState free(String name) {
        return new LockState(name, null, -1, null, -1, null);
    }

    /**
     * A lock {@code holder} holds.
     *
     * @param token its fencing token, or {@code -1} if the backend cannot read it back
     * @param expiresIn how long the backend keeps it for a silent holder, or {@code null} if it does not say
     */
    public static LockState held(String name, Holder holder, long token, Duration expiresIn) {
        return held(name, holder, token, expiresIn, -1);
    }

    /**
     * A lock {@code holder} holds, with {@code waiters} requests waiting behind it ({@code -1} if the
     * backend does not say); the rest as {@link #held(String, Holder, long, Duration)}.
     */
    public static LockState held(String name, Holder holder, long token, Duration expiresIn, int waiters) {
        return held(name, holder, token, expiresIn, waiters, null);
    }

    /**
     * A lock {@code holder} holds since {@code since} ({@code null} if the backend does not say); the rest
     * as {@link #held(String, Holder, long, Duration, int)}.
     */
    public static LockState held(String name, Holder holder, long token, Duration expiresIn, int waiters,
            GrantTime since) {
        return new LockState(name, Objects.requireNonNull(holder, "holder"), token, expiresIn, Math.max(-1, waiters),
                since);
    }

    /** The lock's name. */
    public String name() {
        return name;
    }

    /** Whether some client holds the lock, by the backend's record. */
    public boolean isHeld() {
        return holder != null;
    }

    /**
     * Who holds it, if held; {@link Holder#UNKNOWN} for a holder that wrote no identity (a Redisson
     * client on the same key, an older Latchkey).
     */
    public Optional<Holder> holder() {
        return Optional.ofNullable(holder);
    }

    /** The current grant's fencing token, if held and the backend can read it back. */
    public OptionalLong token() {
        return holder != null && token >= 0 ? OptionalLong.of(token) : OptionalLong.empty();
    }

    /**
     * How long the backend still keeps the grant if its holder goes silent, counted from the read (a
     * key's TTL, an etcd lease's TTL, a ZooKeeper session's timeout), if held and the backend says.
     * A live holder renews it; this is not when the holder will release it.
     */
    public Optional<Duration> expiresIn() {
        return holder != null ? Optional.ofNullable(expiresIn) : Optional.empty();
    }

    /**
     * How many requests of other holders wait behind the grant at the read (queued lock nodes or keys,
     * waiting group members), if held and the backend says. A waiter whose client was killed counts until
     * the backend drops it.
     */
    public OptionalInt waiters() {
        return holder != null && waiters >= 0 ? OptionalInt.of(waiters) : OptionalInt.empty();
    }

    /**
     * Since when it is held, if held and the backend or the holder recorded it, with whose clock and
     * whether the moment is the grant's or the request's ({@link GrantTime.Source}).
     */
    public Optional<GrantTime> since() {
        return holder != null ? Optional.ofNullable(since) : Optional.empty();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LockState s && name.equals(s.name) && Objects.equals(holder, s.holder) && token == s.token
                && Objects.equals(expiresIn, s.expiresIn) && waiters == s.waiters && Objects.equals(since, s.since);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, holder, token, expiresIn, waiters, since);
    }

    @Override
    public String toString() {
        if (holder == null) {
            return "LockState{" + name + ": free}";
        }
        return "LockState{" + name + ": held by " + holder + (token >= 0 ? ", token " + token : "")
                + (since != null ? ", since " + since : "")
                + (expiresIn != null ? ", expires in " + Durations.format(expiresIn) : "")
                + (waiters >= 0 ? ", " + waiters + " waiting" : "") + '}';
    }
}
