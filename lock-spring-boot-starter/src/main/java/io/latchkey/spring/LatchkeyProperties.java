package io.latchkey.spring;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code latchkey.*} properties: the backend's URI and the options every backend shares.
 *
 * <p>An option set here is applied like the same option in code ({@link io.latchkey.LockOptions});
 * one in the URI's query ({@code ?lease=15s}) overrides it. With the application's own Redisson,
 * Curator or jetcd client or, with {@code lock-jdbc}, its DataSource, and no URI, the options still come
 * from these properties (or their defaults), with two differences. On Redisson, a {@code latchkey.lease} left unset is the client's
 * {@code lockWatchdogTimeout} (30 s unless the application changed it), the failover bound its own
 * locks have; Latchkey renews its grants itself and the watchdog plays no part in that. On Curator,
 * the application's session timeout decides how long a crashed holder keeps the lock, so the lease
 * must be at least that session timeout plus a tick (start-up says so if it is not).
 */
@ConfigurationProperties("latchkey")
public class LatchkeyProperties {

    /**
     * The backend to connect to, such as redis://localhost:6379 or zookeeper://zk1:2181,zk2:2181/locks;
     * the scheme selects the Latchkey backend on the class path.
     */
    private String uri;

    /**
     * How long the backend keeps the lock of a holder it no longer hears from: the failover bound after
     * a crash. Default 30s.
     */
    private Duration lease;

    /** Subtracted from every validity deadline. Default a tenth of the lease. */
    private Duration safetyMargin;

    /** The bound on one round trip to the backend. Default 5s. */
    private Duration timeout;

    /** The prefix that keeps this application's locks apart from others on the same backend. */
    private String namespace;

    /**
     * The id written with every grant, which inspection and an election's leader show, for example
     * {@code ${spring.application.name}-${HOSTNAME}}. Default {@code <hostname>:<pid>}.
     */
    private String owner;

    private final Health health = new Health();

    public String getUri() {
        return uri;
    }

    public void setUri(String uri) {
        this.uri = uri;
    }

    public Duration getLease() {
        return lease;
    }

    public void setLease(Duration lease) {
        this.lease = lease;
    }

    public Duration getSafetyMargin() {
        return safetyMargin;
    }

    public void setSafetyMargin(Duration safetyMargin) {
        this.safetyMargin = safetyMargin;
    }

    public Duration getTimeout() {
        return timeout;
    }

    public void setTimeout(Duration timeout) {
        this.timeout = timeout;
    }

    public String getNamespace() {
        return namespace;
    }

    public void setNamespace(String namespace) {
        this.namespace = namespace;
    }

    public String getOwner() {
        return owner;
    }

    public void setOwner(String owner) {
        this.owner = owner;
    }

    public Health getHealth() {
        return health;
    }

    /** The {@code latchkey.health.*} properties of the health indicator. */
    public static class Health {

        /** The lock the health indicator tries (without waiting) to see that the backend answers. */
        private String lockName = "latchkey:health";

        public String getLockName() {
            return lockName;
        }

        public void setLockName(String lockName) {
            this.lockName = lockName;
        }
    }
}
