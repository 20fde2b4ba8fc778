package io.latchkey.spring;

import io.latchkey.Leadership;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Reports the lock backend UP when it answers a try, without waiting, of a health-check lock through
 * the application's {@link LockClient}, held or not; DOWN with the exception when the backend cannot
 * be reached within the client's timeout. A free lock is released at once.
 *
 * <p>When {@link LeaderOnly} beans campaign, the detail {@code elections} shows, per election name,
 * whether this instance leads ({@code leader}) and, if it does, its term number ({@code term}). A
 * standby is as healthy as a leader: the elections never change the status.
 *
 * <p>Thread-safe. Each check is one acquire (and release) on the backend; the elections' state is read
 * locally.
 */
public class LatchkeyHealthIndicator extends AbstractHealthIndicator {

    private final LockClient client;
    private final String lockName;
    private final LeaderOnlyBeans elections; // null: none to report

    /** An indicator that tries {@code lockName} through {@code client}, and reports no elections. */
    public LatchkeyHealthIndicator(LockClient client, String lockName) {
        this(client, lockName, null);
    }

    LatchkeyHealthIndicator(LockClient client, String lockName, LeaderOnlyBeans elections) {
        super("lock backend health check failed");
        this.client = client;
        this.lockName = lockName;
        this.elections = elections;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("backend", client.backendName()).withDetail("lock", lockName);
        Map<String, Optional<Leadership>> now = elections == null ? Map.of() : elections.leadership();
        if (!now.isEmpty()) {
            Map<String, Map<String, Object>> states = new LinkedHashMap<>();
            now.forEach((election, leadership) -> {
                Map<String, Object> state = new LinkedHashMap<>();
                state.put("leader", leadership.isPresent());
                leadership.ifPresent(term -> state.put("term", term.term()));
                states.put(election, state);
            });
            builder.withDetail("elections", states);
        }
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
