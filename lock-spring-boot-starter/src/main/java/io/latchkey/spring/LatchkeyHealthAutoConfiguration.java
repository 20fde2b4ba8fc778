package io.latchkey.spring;

import io.latchkey.LockClient;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code latchkey} health indicator ({@link LatchkeyHealthIndicator}), when Spring Boot 4's health
 * support ({@code spring-boot-health}) is on the class path; {@code management.health.latchkey.enabled=false}
 * turns it off. It shows the elections of the {@link LeaderOnly} beans too. On Boot 3.5,
 * {@link LatchkeyBoot3HealthAutoConfiguration} makes the same indicator of Boot 3.5's health types.
 */
@AutoConfiguration(after = LatchkeyAutoConfiguration.class)
@ConditionalOnClass(name = {"org.springframework.boot.health.contributor.AbstractHealthIndicator",
        "org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator"})
@ConditionalOnBean(LockClient.class)
@ConditionalOnEnabledHealthIndicator("latchkey")
public class LatchkeyHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "latchkeyHealthIndicator")
    LatchkeyHealthIndicator latchkeyHealthIndicator(LockClient client, LatchkeyProperties properties,
            ObjectProvider<LeaderOnlyBeans> elections) {
        return new LatchkeyHealthIndicator(client, properties.getHealth().getLockName(), elections.getIfAvailable());
    }
}
