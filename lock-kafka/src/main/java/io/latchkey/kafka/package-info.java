/**
 * Latchkey on Kafka: a lock is a single-partition topic whose consumer group decides the holder.
 * Start at {@link io.latchkey.kafka.KafkaLockProvider}.
 *
 * <p>Decisions, where the design left room:
 * <ul>
 *   <li><b>Names.</b> Topic and group id are the prefix plus the lock name with every character
 *       other than letters, digits and {@code -} escaped as {@code _XX} per UTF-8 byte; a result over
 *       249 characters is cut and ends with {@code _Z} and the name's SHA-256. Escaped names never
 *       hold a {@code .}, so Kafka's rule that {@code .} and {@code _} collide cannot bite.</li>
 *   <li><b>Topics.</b> Created on first use with one partition; the replication factor is the
 *       {@code replicationFactor} option or as many brokers as there are, up to 3. An existing topic
 *       with more partitions is refused with an error naming it.</li>
 *   <li><b>Assignment.</b> The classic group protocol with the cooperative sticky assignor: a
 *       joining member never takes the partition from its owner. The new protocol
 *       ({@code group.protocol=consumer}) is not offered: its session and heartbeat are broker
 *       settings (45 s and 5 s by default), too slow for failover and hand-over.</li>
 *   <li><b>Members.</b> One consumer and one polling thread per contender, from its join until it
 *       leaves. Waiters stay in the group until they are assigned the partition or their wait ends;
 *       holders poll on while the business code runs, so {@code max.poll.interval.ms} never expels
 *       them. A zero wait still joins once and waits for that rebalance. Release closes the consumer,
 *       which leaves the group at once; the next waiter takes over at its next heartbeat.
 *       That is the protocol's cost, and it is per contender, not per client: each holder and each
 *       waiter is one {@code KafkaConsumer} with its polling thread ({@code latchkey-kafka-<topic>-<n>}),
 *       the consumer's own heartbeat thread, and connections to the group coordinator and the
 *       partition's leader. A client waiting on ten locks at once runs twenty threads for them; the
 *       shared layer admits one contender per lock name and client, which bounds it.</li>
 *   <li><b>Lease.</b> {@code session.timeout.ms} is the lease minus one heartbeat interval. The
 *       coordinator expels a silent member a session after the last heartbeat it received, and the
 *       waiters learn of it at their next heartbeat (then join and sync, a few milliseconds): so a
 *       crashed holder's lock is granted again within the lease plus those round trips, not a
 *       heartbeat later. The broker's {@code group.min.session.timeout.ms} and
 *       {@code group.max.session.timeout.ms} bound the session, so the lease lies between each plus a
 *       heartbeat; connect asks a broker for both (DESCRIBE_CONFIGS on the cluster; without it the
 *       first join reports the broker's refusal). The holder's validity comes from its own heartbeat
 *       evidence (the broker never tells a cut-off member it was expelled), with
 *       {@code min(session.timeout.ms, max.poll.interval.ms)} as the time the broker keeps a silent
 *       member; see {@code GroupMember}.</li>
 *   <li><b>Topic lookups</b> are cached per lock name: a name seen once needs no admin request, so
 *       an acquire right after a broker restart goes straight to the group instead of failing first
 *       on metadata. A wait that ends without the lock forgets the name (a topic deleted meanwhile
 *       would otherwise look held for ever).</li>
 *   <li><b>Release</b> closes the member's consumer, which sends LeaveGroup, within half the timeout;
 *       a close that ran into that bound, or a member that heard no heartbeat answer for a while, is
 *       confirmed with the coordinator in the other half, and a release it cannot confirm is a
 *       {@code LockBackendUnavailableException} (the lock then ends with the session).</li>
 *   <li><b>Fencing.</b> The token is the offset of a marker record the holder appends to the lock's
 *       partition once granted. Offsets survive the deletion of the consumer group (whose generation
 *       restarts) and the retention of old records, but not the deletion of the topic: never delete a
 *       lock's topic while a resource still checks its tokens.</li>
 * </ul>
 *
 * <p>Scheduled jobs: the {@code atLeast} bound of a request is kept by the holder's client, which stays
 * assigned the lock partition until the bound passes. If the holder's process ends earlier, its group
 * membership ends with its session, the lease minus one heartbeat interval after its last heartbeat,
 * whether the process exits without closing the client or is killed (a classic group does not drop a
 * member whose connection closes), and at once if the client is closed; the partition (the lock) then
 * goes to the next member before {@code atLeast}: Kafka has no expiry of its own that could keep it
 * ({@code KafkaAtLeastExitTest} shows the exit and the kill). Once per slot: the last completed
 * slot is a record on the lock's partition carrying its writer's fencing token, appended only while
 * the member holds the partition; a reader counts it only if no grant marker lies between its
 * writer's marker and itself, so a record from a holder that lost the lock is ignored (and its writer
 * told); see {@code SlotRecords}.
 */
package io.latchkey.kafka;
