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
 *   <li><b>Lease.</b> {@code lease} is {@code session.timeout.ms}. The holder's validity comes from
 *       its own heartbeat evidence (the broker never tells a cut-off member it was expelled), with
 *       {@code min(session.timeout.ms, max.poll.interval.ms)} as the time the broker keeps a silent
 *       member; see {@code GroupMember}.</li>
 *   <li><b>Fencing.</b> The token is the offset of a marker record the holder appends to the lock's
 *       partition once granted. Offsets survive the deletion of the consumer group (whose generation
 *       restarts) and the retention of old records, but not the deletion of the topic: never delete a
 *       lock's topic while a resource still checks its tokens.</li>
 * </ul>
 *
 * <p>Scheduled jobs: the {@code atLeast} bound of a request is kept by the holder's client, which stays
 * assigned the lock partition until the bound passes. If the holder's process exits earlier, its
 * group membership ends, at once on a clean close and within the session timeout after a crash, and
 * the partition (the lock) goes to the next member before {@code atLeast}. Schedule slots are not
 * recorded yet: a request with a slot fails with a {@code LockException}.
 */
package io.latchkey.kafka;
