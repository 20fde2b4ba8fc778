package io.latchkey.spring;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import java.time.Duration;
import java.util.Optional;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Reports the lock backend UP when it answers a try, without waiting, of a health-check lock through
 * the application's {@link LockClient}, held or not; DOWN with the exception when the backend cannot
 * be reached within the client's timeout. A free lock is released at once.
 *
 * <p>Thread-safe. Each check is one acquire (and release) on the backend.
 */
public class LatchkeyHealthIndicator extends AbstractHealthIndicator {

    private final LockClient client;
    private final String lockName;

    public LatchkeyHealthIndicator(LockClient client, String lockName) {
        super("lock backend health check failed");
        this.client = client;
        this.lockName = lockName;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("backend", client.backendName()).withDetail("lock", lockName);
        Optional<Lease> lease;
        try {
            lease = client.lock(lockName).tryLock(Duration.ZERO);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            builder.down(e);
            return;
        }
        lease.ifPresent(Lease::close);
        builder.up().withDetail("acquired", lease.isPresent());
    }
}
