package io.latchkey.spring;

import io.latchkey.LockClient;
import io.latchkey.micrometer.LatchkeyMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Lock metrics ({@link LatchkeyMetrics}) for the application's {@link LockClient}, when
 * {@code lock-micrometer} is on the class path and there is a {@link MeterRegistry}: the binder listens
 * to the client's events, and Spring Boot binds it to the registry as it binds every
 * {@code MeterBinder} bean. Lock names are not a tag (they may be unbounded); to choose otherwise,
 * define a {@code LatchkeyMetrics} bean and add it to the client with {@code client.addListener}.
 */
@AutoConfiguration(after = LatchkeyAutoConfiguration.class, afterName = {
        // Spring Boot 4
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
        // Spring Boot 3.5
        "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnClass({LatchkeyMetrics.class, MeterRegistry.class})
@ConditionalOnBean({LockClient.class, MeterRegistry.class})
public class LatchkeyMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LatchkeyMetrics latchkeyMetrics(LockClient client) {
        LatchkeyMetrics metrics = LatchkeyMetrics.builder(client.backendName()).build();
        client.addListener(metrics);
        return metrics;
    }
}
