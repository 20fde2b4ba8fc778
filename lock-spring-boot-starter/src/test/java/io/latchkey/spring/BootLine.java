package io.latchkey.spring;

import java.util.Map;
import java.util.stream.Stream;
import org.springframework.context.ApplicationContext;
import org.springframework.util.ClassUtils;

/**
 * What differs between the Spring Boot lines the starter runs on, 3.5 and 4, for the tests, which run on
 * both (here on Boot 3.5, and in lock-spring-boot4-test on Boot 4): the health API and the packages of the
 * metrics auto-configuration. Each line's types are touched in a class of its own, loaded only on that line.
 */
final class BootLine {

    /** Whether this is Boot 4: its health API is on the class path. */
    static final boolean BOOT_4 = ClassUtils.isPresent("org.springframework.boot.health.contributor.Health",
            BootLine.class.getClassLoader());

    /** Both lines' health auto-configurations, as the starter lists them: the line's own applies. */
    static final Class<?>[] HEALTH = {LatchkeyHealthAutoConfiguration.class,
        LatchkeyBoot3HealthAutoConfiguration.class};

    private BootLine() {
    }

    /** A health report: the status code and the details. */
    record Health(String status, Map<String, Object> details) {
    }

    /** What the {@code latchkeyHealthIndicator} bean, the line's own indicator class, reports now. */
    static Health health(ApplicationContext context) {
        return BOOT_4 ? Boot4.health(context) : Boot3.health(context);
    }

    /** Metrics, compositing and the simple registry's auto-configurations of this line, as Actuator has them. */
    static Class<?>[] metricsAutoConfigurations() {
        String base = BOOT_4 ? "org.springframework.boot.micrometer.metrics.autoconfigure."
                : "org.springframework.boot.actuate.autoconfigure.metrics.";
        return Stream.of("MetricsAutoConfiguration", "CompositeMeterRegistryAutoConfiguration",
                "export.simple.SimpleMetricsExportAutoConfiguration")
                .map(name -> ClassUtils.resolveClassName(base + name, BootLine.class.getClassLoader()))
                .toArray(Class<?>[]::new);
    }

    private static final class Boot4 {
        static Health health(ApplicationContext context) {
            var health = context.getBean("latchkeyHealthIndicator", LatchkeyHealthIndicator.class).health(true);
            return new Health(health.getStatus().getCode(), health.getDetails());
        }
    }

    private static final class Boot3 {
        static Health health(ApplicationContext context) {
            var health = context.getBean("latchkeyHealthIndicator", LatchkeyBoot3HealthIndicator.class).health();
            return new Health(health.getStatus().getCode(), health.getDetails());
        }
    }
}
