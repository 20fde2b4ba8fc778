/**
 * Spring Integration on Latchkey: {@link io.latchkey.spring.integration.LatchkeyLockRegistry}, a
 * {@code LockRegistry} on any Latchkey {@link io.latchkey.LockClient} (Redis, ZooKeeper, etcd or Kafka),
 * so that {@code LockRegistryLeaderInitiator}, the aggregator and other users of a lock registry run
 * unchanged.
 *
 * <p>What differs from {@code RedisLockRegistry} and {@code JdbcLockRegistry}:
 * <ul>
 *   <li><b>Renewal is automatic</b>: the client renews a held lock until it is unlocked, so a slow task
 *       of a live process keeps it without {@code renewLock} or a renewal scheduler, and a crashed
 *       holder's lock frees within the client's {@code lease}. Their registries expire a lock after its
 *       ttl unless renewed by hand or by a scheduler.</li>
 *   <li><b>A loss signal</b>: the lease under the lock
 *       ({@link io.latchkey.spring.integration.LatchkeyLockRegistry#lease(Object)}) completes
 *       {@link io.latchkey.Lease#lost()} when the lock is lost, while the task runs; theirs tell only at
 *       {@code unlock()}, with a {@code ConcurrentModificationException}, which this registry throws too.</li>
 *   <li><b>A fencing token</b>: {@link io.latchkey.Lease#fencingToken()} grows with every grant of a
 *       name, for a resource that refuses writes of an older holder.</li>
 *   <li><b>Names</b>: the key's text is the lock name, checked by Latchkey's rule (at most 255
 *       characters, no control character); the client's {@code namespace} option plays the part of
 *       their registry key or region.</li>
 *   <li><b>Unlock by another thread</b> is an {@code IllegalMonitorStateException} as in the JDBC
 *       registry ({@code RedisLockRegistry} throws an {@code IllegalStateException}).</li>
 *   <li><b>Failures</b> are Latchkey's exceptions ({@link io.latchkey.LockBackendUnavailableException},
 *       {@link io.latchkey.LockLostException}), not Spring's {@code CannotAcquireLockException}.</li>
 * </ul>
 */
package io.latchkey.spring.integration;
