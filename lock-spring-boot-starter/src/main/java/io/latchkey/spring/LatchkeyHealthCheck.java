package io.latchkey.spring;

import io.latchkey.Leadership;
import io.latchkey.Lease;
import io.latchkey.LockClient;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;

/**
 * The health check of the {@code latchkey} indicator, apart from Spring Boot's health API, which is in
 * another package on each Boot line: {@link LatchkeyHealthIndicator} (Boot 4) and
 * {@link LatchkeyBoot3HealthIndicator} (Boot 3.5) report what it finds. See {@link LatchkeyHealthIndicator}
 * for the details and what each check costs.
 *
 * <p>Thread-safe.
 */
final class LatchkeyHealthCheck {

    private final LockClient client;
    private final String lockName;
    private final LeaderOnlyBeans elections; // null: none to report
    private final HeldLeases held;

    LatchkeyHealthCheck(LockClient client, String lockName, LeaderOnlyBeans elections) {
        this.client = client;
        this.lockName = lockName;
        this.elections = elections;
        this.held = new HeldLeases();
        client.addListener(held);
    }

    /**
     * Gives each detail to {@code details} as it is known, and returns once the backend answered the try
     * of the health-check lock, or throws what the backend's client threw: the indicator reports UP or
     * DOWN with the details given until then.
     */
    void check(BiConsumer<String, Object> details) throws InterruptedException {
        details.accept("backend", client.backendName());
        details.accept("lock", lockName);
        details.accept("leasesHeld", held.countExcept(lockName));
        Map<String, Optional<Leadership>> now = elections == null ? Map.of() : elections.leadership();
        if (!now.isEmpty()) {
            details.accept("elections", elections(now));
        }
        Optional<Lease> lease = client.lock(lockName).tryLock(Duration.ZERO);
        lease.ifPresent(Lease::close);
        details.accept("acquired", lease.isPresent());
    }

    /** Per election: whether this instance leads, its term if so, else who leads, if anyone. */
    private Map<String, Map<String, Object>> elections(Map<String, Optional<Leadership>> now)
            throws InterruptedException {
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
