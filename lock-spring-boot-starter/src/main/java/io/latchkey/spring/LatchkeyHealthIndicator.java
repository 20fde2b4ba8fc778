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
 */
public class LatchkeyHealthIndicator extends AbstractHealthIndicator {

    private final LockClient client;
    private final String lockName;
    private final LeaderOnlyBeans elections; // null: none to report
    private final HeldLeases held;

    /** An indicator that tries {@code lockName} through {@code client}, and reports no elections. */
    public LatchkeyHealthIndicator(LockClient client, String lockName) {
        this(client, lockName, null);
    }

    LatchkeyHealthIndicator(LockClient client, String lockName, LeaderOnlyBeans elections) {
        super("lock backend health check failed");
        this.client = client;
        this.lockName = lockName;
        this.elections = elections;
        this.held = new HeldLeases();
        client.addListener(held);
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("backend", client.backendName()).withDetail("lock", lockName)
                .withDetail("leasesHeld", held.countExcept(lockName));
        Map<String, Optional<Leadership>> now = elections == null ? Map.of() : elections.leadership();
        Optional<Lease> lease;
        try {
            if (!now.isEmpty()) {
                builder.withDetail("elections", elections(now));
            }
            lease = client.lock(lockName).tryLock(Duration.ZERO);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            builder.down(e);
            return;
        }
        lease.ifPresent(Lease::close);
        builder.up().withDetail("acquired", lease.isPresent());
    }

    /** Per election: whether this instance leads, its term if so, else who leads, if anyone. */
    private Map<String, Map<String, Object>> elections(Map<String, Optional<Leadership>> now) throws InterruptedException {
        Map<String, Map<String, Object>> states = new LinkedHashMap<>();
        for (Map.Entry<String, Optional<Leadership>> e : now.entrySet()) {
            Map<String, Object> state = new LinkedHashMap<>();
            state.put("leader", e.getValue().isPresent());
            if (e.getValue().isPresent()) {
                state.put("term", e.getValue().get().term());
            } else {
                client.election(e.getKey()).leader().ifPresent(holder -> state.put("ledBy", holder.owner()));
            }
            states.put(e.getKey(), state);
        }
        return states;
    }
}
