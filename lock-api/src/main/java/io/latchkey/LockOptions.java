package io.latchkey;

import io.latchkey.spi.Durations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The settings of a {@link LockClient}: the shared ones every backend honours, plus backend-specific
 * options by name.
 *
 * <ul>
 *   <li>{@code lease} (default 30s): how long the backend keeps the lock for a holder it no longer
 *       hears from. It bounds failover after a crash and is the period renewal keeps extending.</li>
 *   <li>{@code safetyMargin} (default a tenth of {@code lease}): subtracted from every validity
 *       deadline, to cover clock rate differences and the time between a check and its use.</li>
 *   <li>{@code timeout} (default 5s): the bound on one round trip to the backend; a dead backend
 *       fails within the caller's wait plus this bound.</li>
 *   <li>{@code namespace}: the prefix (key prefix, base path, topic prefix) that keeps this
 *       application's locks apart from others on the same backend; each backend has a default.</li>
 *   <li>{@code username} and {@code password}: credentials, when the backend requires them.</li>
 *   <li>{@code owner} (default {@code <hostname>:<pid>}): the id this client writes with every grant,
 *       as the {@link Holder} that others see ({@link DistributedLock#inspect()},
 *       {@link Election#leader()}).</li>
 *   <li>{@code listeners}: the {@link LockListener}s every client built with these options starts with.</li>
 * </ul>
 *
 * <p>Instances are immutable and thread-safe; build them with {@link #builder()}.
 */
public final class LockOptions {

    /**
     * The longest lease and timeout accepted: a day. The lease is the failover bound after a crash;
     * longer ones are mistakes, and a cap keeps every deadline computed from them far from overflow.
     */
    public static final Duration MAX_DURATION = Duration.ofDays(1);

    private static final LockOptions DEFAULTS = builder().build();

    private final Duration lease;
    private final Duration explicitSafetyMargin;
    /** The margin in effect, worked out once: {@link Duration#dividedBy(long)} is not cheap, and every acquire asks. */
    private final Duration safetyMargin;
    private final Duration timeout;
    private final String namespace;
    private final String username;
    private final String password;
    private final String owner;
    private final Map<String, String> backendOptions;
    private final List<LockListener> listeners;

    private LockOptions(Builder b) {
        this.lease = b.lease;
        this.explicitSafetyMargin = b.safetyMargin;
        this.safetyMargin = b.safetyMargin != null ? b.safetyMargin : b.lease.dividedBy(10);
        this.timeout = b.timeout;
        this.namespace = b.namespace;
        this.username = b.username;
        this.password = b.password;
        this.owner = b.owner;
        this.backendOptions = Collections.unmodifiableMap(new TreeMap<>(b.backendOptions));
        this.listeners = List.copyOf(b.listeners);
        if (safetyMargin().compareTo(lease) >= 0) {
            throw new IllegalArgumentException("safety margin must be shorter than the lease: safetyMargin="
                    + Durations.format(safetyMargin()) + ", lease=" + Durations.format(lease)
                    + "; shorten the margin or lengthen the lease");
        }
    }

    /** The options used when none are given. */
    public static LockOptions defaults() {
        return DEFAULTS;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder that starts from these options. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.lease = lease;
        b.safetyMargin = explicitSafetyMargin;
        b.timeout = timeout;
        b.namespace = namespace;
        b.username = username;
        b.password = password;
        b.owner = owner;
        b.backendOptions.putAll(backendOptions);
        b.listeners.addAll(listeners);
        return b;
    }

    public Duration lease() {
        return lease;
    }

    /** The safety margin: as set, or a tenth of the lease if it was not set. */
    public Duration safetyMargin() {
        return safetyMargin;
    }

    public Duration timeout() {
        return timeout;
    }

    /** The namespace, or {@code null} for the backend's default. */
    public String namespace() {
        return namespace;
    }

    /** The user name, or {@code null}. */
    public String username() {
        return username;
    }

    /** The password, or {@code null}. Never printed by {@link #toString()}. */
    public String password() {
        return password;
    }

    /**
     * The owner id written with every grant of a client with these options: as set, or
     * {@link Holder#defaultOwner()} ({@code <hostname>:<pid>}) if it was not.
     */
    public String owner() {
        return owner != null ? owner : DefaultOwner.VALUE;
    }

    /** The default owner id, resolved once, at its first use: the host name lookup may be slow. */
    private static final class DefaultOwner {
        static final String VALUE = Holder.defaultOwner();
    }

    /** The backend-specific options, by name, sorted. */
    public Map<String, String> backendOptions() {
        return backendOptions;
    }

    /** The value of a backend-specific option, or {@code defaultValue} if it is not set. */
    public String backendOption(String name, String defaultValue) {
        return backendOptions.getOrDefault(name, defaultValue);
    }

    /** The listeners of lock events every client with these options starts with, in order. */
    public List<LockListener> listeners() {
        return listeners;
    }

    @Override
    public String toString() {
        return "LockOptions{lease=" + Durations.format(lease) + ", safetyMargin=" + Durations.format(safetyMargin())
                + ", timeout=" + Durations.format(timeout)
                + ", namespace=" + namespace + ", owner=" + owner() + ", username=" + username
                + ", password=" + (password == null ? "null" : "****") + ", backendOptions=" + backendOptions + '}';
    }

    /** Builds {@link LockOptions}. Not thread-safe. */
    public static final class Builder {

        private Duration lease = Duration.ofSeconds(30);
        private Duration safetyMargin;
        private Duration timeout = Duration.ofSeconds(5);
        private String namespace;
        private String username;
        private String password;
        private String owner;
        private final Map<String, String> backendOptions = new TreeMap<>();
        private final List<LockListener> listeners = new ArrayList<>();

        private Builder() {
        }

        public Builder lease(Duration lease) {
            this.lease = positive("lease", lease);
            return this;
        }

        public Builder safetyMargin(Duration safetyMargin) {
            Objects.requireNonNull(safetyMargin, "safetyMargin");
            if (safetyMargin.isNegative()) {
                throw new IllegalArgumentException("safety margin must not be negative: " + Durations.format(safetyMargin));
            }
            this.safetyMargin = safetyMargin;
            return this;
        }

        public Builder timeout(Duration timeout) {
            this.timeout = positive("timeout", timeout);
            return this;
        }

        public Builder namespace(String namespace) {
            if (namespace != null && namespace.isEmpty()) {
                throw new IllegalArgumentException("namespace must not be empty; leave it unset for the backend's default");
            }
            this.namespace = namespace;
            return this;
        }

        public Builder credentials(String username, String password) {
            this.username = username;
            this.password = password;
            return this;
        }

        /**
         * Sets the owner id written with every grant; see {@link Holder}. {@code null} restores the default.
         *
         * @throws IllegalArgumentException if it is blank, longer than {@link Holder#MAX_OWNER_LENGTH}
         *     or holds a control character
         */
        public Builder owner(String owner) {
            this.owner = owner == null ? null : Holder.checkOwner(owner);
            return this;
        }

        /** Sets a backend-specific option; the backend rejects names it does not know. */
        public Builder backendOption(String name, String value) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
            backendOptions.put(name, value);
            return this;
        }

        /** Adds a listener of lock events; see {@link LockListener}. */
        public Builder listener(LockListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * Builds the options.
         *
         * @throws IllegalArgumentException if the safety margin is not shorter than the lease
         */
        public LockOptions build() {
            return new LockOptions(this);
        }

        private static Duration positive(String what, Duration d) {
            Objects.requireNonNull(d, what);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive: " + Durations.format(d));
            }
            if (d.compareTo(MAX_DURATION) > 0) {
                throw new IllegalArgumentException(what + " must be at most " + Durations.format(MAX_DURATION) + ": "
                        + Durations.format(d));
            }
            return d;
        }
    }
}
