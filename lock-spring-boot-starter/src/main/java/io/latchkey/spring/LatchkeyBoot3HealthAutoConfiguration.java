package io.latchkey.spring;

import io.latchkey.LockClient;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code latchkey} health indicator on Spring Boot 3.5 ({@link LatchkeyBoot3HealthIndicator}), when
 * Boot 3.5's health support ({@code spring-boot-actuator}) is on the class path; as
 * {@link LatchkeyHealthAutoConfiguration} does on Boot 4, whose health types are in another package.
 * {@code management.health.latchkey.enabled=false} turns it off.
 */
@AutoConfiguration(after = LatchkeyAutoConfiguration.class)
@ConditionalOnClass(name = {"org.springframework.boot.actuate.health.AbstractHealthIndicator",
        "org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator"})
@ConditionalOnBean(LockClient.class)
@ConditionalOnEnabledHealthIndicator("latchkey")
public class LatchkeyBoot3HealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "latchkeyHealthIndicator")
    LatchkeyBoot3HealthIndicator latchkeyHealthIndicator(LockClient client, LatchkeyProperties properties,
            ObjectProvider<LeaderOnlyBeans> elections) {
        return new LatchkeyBoot3HealthIndicator(client, properties.getHealth().getLockName(),
                elections.getIfAvailable());
    }
}
