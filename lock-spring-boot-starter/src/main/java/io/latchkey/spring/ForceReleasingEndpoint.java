package io.latchkey.spring;

import io.latchkey.LockClient;
import io.latchkey.LockState;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code latchkey} Actuator endpoint with force release: {@code DELETE /actuator/latchkey/{name}} ends
 * the current grant of lock {@code name} on the backend, whoever holds it
 * ({@link io.latchkey.DistributedLock#forceRelease()}), and answers the grant it ended.
 *
 * <p>Only when the application enables it with {@code latchkey.endpoint.force-release=true}: an endpoint
 * that writes to the backend is an administrator's tool, and Actuator's exposure settings alone would
 * turn it on with the read-only view. Secure it as any write endpoint.
 */
public class ForceReleasingEndpoint extends LatchkeyEndpoint {

    ForceReleasingEndpoint(LockClient client, HeldLeases held) {
        super(client, held);
    }

    /**
     * Ends the grant of lock {@code name}: {@code released} says whether there was one, and the rest is
     * as {@link #lock(String)} read it just before.
     *
     * @throws org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException (400) for a name
     *     that breaks the rule of lock names
     */
    @DeleteOperation
    public Map<String, Object> forceRelease(@Selector String name) throws InterruptedException {
        LockState ended = client().lock(checked(name)).forceRelease();
        Map<String, Object> m = describe(ended);
        m.put("released", ended.isHeld());
        return m;
    }
}
