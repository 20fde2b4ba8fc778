package io.latchkey.spring;

import io.latchkey.LockClient;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The {@code latchkey} health indicator on Spring Boot 3.5, whose health API is in
 * {@code spring-boot-actuator}: the same check and details as {@link LatchkeyHealthIndicator}, the
 * indicator on Boot 4. The auto-configuration makes the one of the application's Boot line.
 *
 * <p>Thread-safe.
 */
public class LatchkeyBoot3HealthIndicator extends AbstractHealthIndicator {

    private final LatchkeyHealthCheck check;

    /** An indicator that tries {@code lockName} through {@code client}, and reports no elections. */
    public LatchkeyBoot3HealthIndicator(LockClient client, String lockName) {
        this(client, lockName, null);
    }

    LatchkeyBoot3HealthIndicator(LockClient client, String lockName, LeaderOnlyBeans elections) {
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
