/**
 * lock-bench: Latchkey against the raw clients it is built on, on the same server, in the same run,
 * in alternating rounds ({@link io.latchkey.bench.Bench}).
 *
 * <p>Decisions where the issue is silent:
 * <ul>
 *   <li>Every variant gets the same lease (Latchkey's {@code lease}, Redisson's
 *       {@code lockWatchdogTimeout}, Curator's session timeout, the etcd lease TTL, Kafka's
 *       {@code session.timeout.ms}, ShedLock's {@code lockAtMostFor}, JdbcLockRegistry's TTL) and its
 *       client's defaults otherwise: a raw client is used as its documentation shows, not tuned
 *       (Redisson's default pool opens 24 connections at connect, for one).</li>
 *   <li>Latchkey is used through {@code LockClient.connect(uri)} alone, the way an application does;
 *       the raw clients' lock objects are made per acquisition.</li>
 *   <li>jetcd's Lock and the txn floor keep one lease per thread: the Lock RPC's key is the name plus
 *       the lease, so two threads of one client on one lease would both "hold" the lock.</li>
 *   <li>The naive Kafka lock creates a lock's topic at its first use (the kit's broker does not create
 *       topics on its own) and polls in steps of 100 ms until assigned.</li>
 *   <li>Hand-over is timed from the start of the holder's release to another client's grant; a holder
 *       keeps the lock for a while (50 ms, Kafka 1 s) so that the others are queued on the server, and
 *       waits again only once another client holds it.</li>
 *   <li>The JDBC competitors (PostgreSQL and MariaDB) each get a HikariCP pool sized as Latchkey's
 *       own is by default (4 connections, 1 kept idle), and their tables from their projects' DDL:
 *       ShedLock's documented {@code shedlock} table ({@code TIMESTAMP(3)} on MariaDB, as its docs give),
 *       Spring Integration's {@code INT_LOCK} from the schema script in its jar. ShedLock's
 *       {@code JdbcTemplateLockProvider} runs {@code usingDbTime()} with {@code lockAtLeastFor} zero;
 *       it cannot wait, so its locker tries again every 100 ms until the wait is over: the interval
 *       JdbcLockRegistry waits between tries by default, and Latchkey's default poll on MariaDB.</li>
 *   <li>Crash failover: the holder runs in a child JVM, the waiter here has waited one second when the
 *       child is killed with SIGKILL; the time from the kill to the grant.</li>
 *   <li>Holding many locks ({@link io.latchkey.bench.HeldLocks}) is measured for Latchkey alone: one
 *       client, after 20 names to warm it up, takes {@code --held} new names and holds them for one lease
 *       and a second, so that a lease still valid at the end was renewed. Heap (after a GC) and live
 *       threads are counted against the same open client holding nothing. Server operations are read
 *       where a counter is at hand: Redis's {@code total_commands_processed}, ZooKeeper's
 *       {@code zk_packets_received}, PostgreSQL's {@code pg_stat_statements}; not on etcd, Kafka and
 *       MariaDB. Kafka holds at most 1,000: each held lock there is a topic, a group and a consumer.</li>
 * </ul>
 */
package io.latchkey.bench;
