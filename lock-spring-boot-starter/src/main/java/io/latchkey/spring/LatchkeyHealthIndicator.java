package io.latchkey.spring;

import io.latchkey.LockClient;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Reports the lock backend UP when it answers a try, without waiting, of a health-check lock through
 * the application's {@link LockClient}, held or not; DOWN with the exception when the backend cannot
 * be reached within the client's timeout. A free lock is released at once.
 *
 * <p>When {@link LeaderOnly} beans campaign, the detail {@code elections} shows, per election name,
 * whether this instance leads ({@code leader}) and, if it does, its term number ({@code term}); if it
 * stands by, the owner id of the instance that leads ({@code ledBy}), if any. A standby is as healthy as
 * a leader: the elections never change the status.
 *
 * <p>The detail {@code leasesHeld} is how many grants (locks and permits) this application's client
 * holds, the health check's own lock left out, counted from its lock events as the {@code latchkey}
 * endpoint lists them; so it trails a grant or a release by the time its event takes.
 *
 * <p>Thread-safe. Each check is one acquire (and release) on the backend, and one read of the leader
 * ({@link io.latchkey.Election#leader()}) per election this instance stands by in; whether it leads is
 * read locally.
 *
 * <p>This is the indicator on Spring Boot 4 (its health API, {@code spring-boot-health}); on Boot 3.5 the
 * same check is {@link LatchkeyBoot3HealthIndicator}.
 */
public class LatchkeyHealthIndicator extends AbstractHealthIndicator {

    private final LatchkeyHealthCheck check;

    /** An indicator that tries {@code lockName} through {@code client}, and reports no elections. */
    public LatchkeyHealthIndicator(LockClient client, String lockName) {
        this(client, lockName, null);
    }

    LatchkeyHealthIndicator(LockClient client, String lockName, LeaderOnlyBeans elections) {
        super("lock backend health check failed");
        this.check = new LatchkeyHealthCheck(client, lockName, elections);
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        try {
            check.check(builder::withDetail);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            builder.down(e);
            return;
        }
        builder.up();
    }
}
