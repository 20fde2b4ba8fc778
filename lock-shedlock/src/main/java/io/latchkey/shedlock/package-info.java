/**
 * ShedLock on Latchkey: {@link io.latchkey.shedlock.LatchkeyLockProvider} is a ShedLock
 * {@code ExtensibleLockProvider} on any {@link io.latchkey.LockClient}, so that {@code @SchedulerLock}
 * jobs keep their code and run on Redis, ZooKeeper, etcd or Kafka through Latchkey.
 *
 * <h2>How ShedLock's semantics map</h2>
 * <ul>
 *   <li>{@code lock(configuration)}: {@code tryLock} of the Latchkey lock of the same name, without
 *       waiting; empty if it is held anywhere, this process included.</li>
 *   <li>{@code lockAtMostFor}: the hold's upper bound, kept by the provider on this process's monotonic
 *       clock from before the request: then the lease turns invalid, {@code lost()} completes with
 *       reason {@code AT_MOST} and the lock is released, even if the task still runs.</li>
 *   <li>{@code lockAtLeastFor}: Latchkey's {@code atLeast}; after {@code unlock()} the lock stays taken
 *       until it passes, in the backend's expiry on Redis and etcd (so it holds if the process exits;
 *       etcd counts it in whole seconds, rounded up, and expires up to half a second late), kept by the
 *       client on ZooKeeper and Kafka (so it ends early if the process exits).</li>
 *   <li>Not reentrant: a second {@code lock()} of a held name, from any thread of the process, is
 *       empty, as ShedLock's providers are. Latchkey's per-thread nesting is never used here.</li>
 *   <li>{@code extend(lockAtMostFor, lockAtLeastFor)} ({@code LockExtender}): the same Latchkey grant
 *       and fencing token go on, and the bounds count again from now; empty, and the name freed, once
 *       the lease is no longer valid. The old {@code SimpleLock} is unusable after it.</li>
 * </ul>
 *
 * <h2>What differs from ShedLock's own providers</h2>
 * <ul>
 *   <li><b>A held lock does not expire by the clock.</b> ShedLock's storage providers write "locked
 *       until now + lockAtMostFor" and nothing renews it. Latchkey renews the grant while its holder
 *       lives, so a live task keeps the lock until it returns or {@code lockAtMostFor} passes, however
 *       long the backend's {@code lease} is.</li>
 *   <li><b>A dead holder frees the lock within Latchkey's {@code lease}</b> (the client's failover bound,
 *       seconds), not after {@code lockAtMostFor}: a crashed node does not block the job for the rest
 *       of its bound. A {@code lockAtLeastFor} kept by the backend's expiry (Redis, etcd) still holds.</li>
 *   <li><b>Loss is signalled.</b> If the backend may have given the lock to another node (expiry, a
 *       network cut, a paused process, {@code lockAtMostFor} passing), the task's lease turns invalid and
 *       {@code lost()} completes; ShedLock's own providers cannot tell a running task.</li>
 *   <li><b>Fencing tokens.</b> Every grant has a token above every earlier grant's of the name; hand it
 *       to the resource the task writes, so that it refuses a node that kept running after its lock
 *       ended.</li>
 *   <li><b>Names</b> follow Latchkey's rule: non-empty, at most 255 characters, no control
 *       characters.</li>
 * </ul>
 *
 * <p>The task reads its lease with {@link io.latchkey.shedlock.LatchkeyLockProvider#currentLease()} on
 * the thread ShedLock runs it on.
 */
package io.latchkey.shedlock;
