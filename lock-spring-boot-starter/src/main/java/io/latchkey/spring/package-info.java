/**
 * Latchkey for Spring Boot: a {@link io.latchkey.LockClient} bean from {@code latchkey.*} properties, or on
 * the application's own backend client or, with {@code lock-jdbc} on the class path, on its
 * {@code DataSource} (see {@link io.latchkey.spring.LatchkeyAutoConfiguration}), the {@link io.latchkey.spring.DistributedLocked} annotation
 * for methods (scheduled or not) with transaction-aware release, {@link io.latchkey.spring.LeaderOnly}
 * lifecycle beans that run only while the instance leads an election (with {@link
 * io.latchkey.spring.LeadershipEvent}s), a health indicator, lock metrics, and the read-only Actuator
 * endpoint {@code latchkey} ({@link io.latchkey.spring.LatchkeyEndpoint}): the leases the application holds,
 * and who holds a lock of any name.
 */
package io.latchkey.spring;
