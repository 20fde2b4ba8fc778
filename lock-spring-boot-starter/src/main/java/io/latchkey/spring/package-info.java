/**
 * Latchkey for Spring Boot: a {@link io.latchkey.LockClient} bean from {@code latchkey.*} properties or
 * the application's own backend client, the {@link io.latchkey.spring.DistributedLocked} annotation
 * for methods (scheduled or not) with transaction-aware release, {@link io.latchkey.spring.LeaderOnly}
 * lifecycle beans that run only while the instance leads an election (with {@link
 * io.latchkey.spring.LeadershipEvent}s), a health indicator and lock metrics.
 */
package io.latchkey.spring;
