/**
 * Latchkey for Spring Boot: a {@link io.latchkey.LockClient} bean from {@code latchkey.*} properties or
 * the application's own backend client, the {@link io.latchkey.spring.DistributedLocked} annotation
 * for methods (scheduled or not) with transaction-aware release, a health indicator and lock metrics.
 */
package io.latchkey.spring;
