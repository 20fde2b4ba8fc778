package io.latchkey.spring;

import io.latchkey.LockClient;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * The {@code latchkey} Actuator endpoint ({@link LatchkeyEndpoint}), when Spring Boot's Actuator is on
 * the class path and the endpoint is available (enabled and exposed, as Actuator decides for every
 * endpoint). Its list of held leases starts with the endpoint: it registers its listener on the client
 * as the endpoint is made, before the application's own beans take leases at their start.
 */
@AutoConfiguration(after = LatchkeyAutoConfiguration.class)
@ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
@ConditionalOnBean(LockClient.class)
@ConditionalOnAvailableEndpoint(LatchkeyEndpoint.class)
public class LatchkeyEndpointAutoConfiguration {

    /** With force release, only when the application enables it; declared first, so that it wins. */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnProperty(name = "latchkey.endpoint.force-release", havingValue = "true")
    LatchkeyEndpoint forceReleasingLatchkeyEndpoint(LockClient client) {
        return new ForceReleasingEndpoint(client, listening(client));
    }

    @Bean
    @ConditionalOnMissingBean
    LatchkeyEndpoint latchkeyEndpoint(LockClient client) {
        return new LatchkeyEndpoint(client, listening(client));
    }

    private static HeldLeases listening(LockClient client) {
        HeldLeases held = new HeldLeases();
        client.addListener(held);
        return held;
    }
}
