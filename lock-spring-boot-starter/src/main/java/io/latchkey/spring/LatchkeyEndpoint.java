package io.latchkey.spring;

import io.latchkey.Holder;
import io.latchkey.LockClient;
import io.latchkey.LockState;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The Actuator endpoint {@code latchkey}: the leases this application holds ({@code /actuator/latchkey})
 * and who holds a lock of any name, by any client ({@code /actuator/latchkey/{name}}).
 *
 * <p>Read-only, by decision: it changes nothing on the backend, unless the application enables force
 * release ({@link ForceReleasingEndpoint}). The list is this application's own,
 * kept from its client's lock events ({@link HeldLeases}); a name is one read of the backend
 * ({@link io.latchkey.DistributedLock#inspect()}). Exposed like any endpoint, for example with
 * {@code management.endpoints.web.exposure.include=health,latchkey}.
 */
@Endpoint(id = "latchkey")
public class LatchkeyEndpoint {

    private final LockClient client;
    private final HeldLeases held;

    LatchkeyEndpoint(LockClient client, HeldLeases held) {
        this.client = client;
        this.held = held;
    }

    /** This application's client: its backend and owner id, and the leases it holds now. */
    @ReadOperation
    public Map<String, Object> leases() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("backend", client.backendName());
        m.put("owner", client.options().owner());
        m.put("held", held.snapshot());
        return m;
    }

    /**
     * Who holds lock {@code name} now, by any client: {@code held}, and if held {@code owner},
     * {@code clientStarted}, {@code thread}, {@code token}, {@code since} with {@code sinceSource} (a
     * {@link io.latchkey.GrantTime.Source}), {@code expiresInMillis} and {@code waiters} where the backend
     * tells them.
     *
     * @throws InvalidEndpointRequestException (400) for a name that breaks the rule of lock names
     */
    @ReadOperation
    public Map<String, Object> lock(@Selector String name) throws InterruptedException {
        return describe(client.lock(checked(name)).inspect());
    }

    LockClient client() {
        return client;
    }

    /** {@code name}, or a 400 naming the rule it breaks. */
    static String checked(String name) {
        try {
            return LockClient.checkName(name);
        } catch (IllegalArgumentException e) {
            throw new InvalidEndpointRequestException("bad lock name: " + e.getMessage(), e.getMessage());
        }
    }

    /** A lock's state as the endpoint answers it. */
    static Map<String, Object> describe(LockState state) {
        String name = state.name();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("held", state.isHeld());
        state.holder().ifPresent(h -> {
            m.put("owner", h.owner());
            if (!h.equals(Holder.UNKNOWN)) {
                m.put("clientStarted", h.clientStarted().toString());
                m.put("thread", h.thread());
            }
        });
        state.token().ifPresent(t -> m.put("token", t));
        state.since().ifPresent(t -> {
            m.put("since", t.at().toString());
            m.put("sinceSource", t.source().name());
        });
        state.expiresIn().ifPresent(d -> m.put("expiresInMillis", d.toMillis()));
        state.waiters().ifPresent(n -> m.put("waiters", n));
        return m;
    }
}
