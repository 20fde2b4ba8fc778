/**
 * Latchkey on Kafka: a lock is a single-partition topic whose consumer group decides the holder, a
 * semaphore of {@code N} permits a topic of {@code N} partitions whose group gives each member at most one.
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
 *       them. A zero wait still joins once and waits for that rebalance (a semaphore's member may stay for one
 *       more, below). Release closes the consumer,
 *       which leaves the group at once. That is the protocol's cost, and it is per contender, not per
 *       client: each holder and each
 *       waiter is one {@code KafkaConsumer} with its polling thread ({@code latchkey-kafka-<topic>-<n>}),
 *       the consumer's own heartbeat thread, and connections to the group coordinator and the
 *       partition's leader. A client waiting on ten locks at once runs twenty threads for them; the
 *       shared layer admits one contender per lock name and client, which bounds it. The shared
 *       admin client, producer and (for scheduled jobs) slot reader add their own network threads,
 *       one each per client.</li>
 *   <li><b>Hand-over.</b> By default ({@code handover=heartbeat}) a waiter learns of a release at its
 *       next heartbeat, at most one heartbeat interval after it. With {@code handover=rejoin}, a
 *       waiter that a rebalance left without the lock at once asks to rejoin,
 *       which starts another rebalance that the coordinator completes only when every member has
 *       rejoined: the waiter is parked in a pending JoinGroup. The holder learns of the rebalance at
 *       its next heartbeat and rejoins, keeping the partition (the assignor never moves it from an
 *       owner that rejoins), so a joining or parked member never takes a held lock; but a holder's
 *       LeaveGroup completes the pending join phase at once, and a parked waiter is assigned the
 *       partition in a few round trips instead of at its next heartbeat, as in the naive lock whose
 *       holder stops polling ({@code KafkaCostTest.handOverDoesNotWaitForAHeartbeat}). The cost: while a
 *       lock is contended its group rebalances once per heartbeat interval of the holder (a JoinGroup
 *       and a SyncGroup of each member, and a group record the coordinator writes), where an idle
 *       waiter would only heartbeat. The group's generation therefore moves; fencing does not use
 *       it. And a member that stops answering (a waiter killed or paused) holds up the join phase
 *       until its session ends; a holder that has rejoined sends no heartbeats meanwhile (the
 *       consumer does not heartbeat while its JoinGroup is pending), so its validity runs out first:
 *       a loss signal without an overlap. Any join or leave of another member in that time has the
 *       same effect; parking makes such a rebalance certain, so a waiter killed while another parks
 *       costs the holder its lease ({@code KafkaHandoverModeTest}). That is why parking is not the
 *       default: without it a dead waiter disturbs the holder only if another member joins or leaves
 *       before its session ends. Choose {@code handover=rejoin} where hand-over speed matters more
 *       than a holder surviving a contender's crash.</li>
 *   <li><b>Lease.</b> {@code session.timeout.ms} is the lease minus one heartbeat interval. The
 *       coordinator expels a silent member a session after the last heartbeat it received, and the
 *       waiters learn of it at their next heartbeat (then join and sync, a few milliseconds): so a
 *       crashed holder's lock is granted again within the lease plus those round trips, not a
 *       heartbeat later (a parked waiter learns of the expulsion at once). The broker's {@code group.min.session.timeout.ms} and
 *       {@code group.max.session.timeout.ms} bound the session, so the lease lies between each plus a
 *       heartbeat; connect asks a broker for both (DESCRIBE_CONFIGS on the cluster; without it the
 *       first join reports the broker's refusal). The holder's validity comes from its own heartbeat
 *       evidence (the broker never tells a cut-off member it was expelled), with
 *       {@code min(session.timeout.ms, max.poll.interval.ms)} as the time the broker keeps a silent
 *       member; see {@code HeartbeatEvidence}.</li>
 *   <li><b>What an acquire costs, and what is cached.</b> A lock name's topic is looked up (and
 *       created) with the admin client once; the client then keeps it known, the 1024 most recently
 *       used names (about 200 bytes each), so a name seen before needs no admin or metadata request of
 *       Latchkey's: the member's consumer joins the group (FindCoordinator, JoinGroup, SyncGroup,
 *       its own metadata for the subscription) and the shared producer appends one marker
 *       ({@code KafkaCostTest.knownNameCostsNoAdminRequest}). An acquire right after a broker restart
 *       therefore goes straight to the group, whose consumer waits for the coordinator, instead of
 *       failing first on a topic lookup. A name is forgotten when a wait ends without the lock and the
 *       member's consumer has no metadata for the topic (deleted meanwhile, it would otherwise look
 *       held for ever); the token topic is looked up again when a marker finds it gone.</li>
 *   <li><b>Retained per lock name.</b> After release nothing but the cache entry: the member's
 *       consumer is closed with all its state, and the shared producer writes the fencing markers to
 *       the one token topic, never to a lock topic, so its per-topic metrics, metadata and JMX beans
 *       do not grow with the names used (about 20 KB per name when it wrote to each lock topic;
 *       {@code KafkaCostTest.releasedNamesLeaveNoStatePerName}). Scheduled jobs are the exception:
 *       their slot records go to the lock's own topic, so the producer and the slot reader keep
 *       per-topic state for each job name, which is a short and fixed list.</li>
 *   <li><b>Release</b> closes the member's consumer, which sends LeaveGroup, within half the timeout;
 *       a close that ran into that bound, or a member that heard no heartbeat answer for a while, is
 *       confirmed with the coordinator in the other half, and a release it cannot confirm is a
 *       {@code LockBackendUnavailableException} (the lock then ends with the session).</li>
 *   <li><b>Fencing.</b> The token is the offset of a marker record the holder appends once granted
 *       to the only partition of the token topic {@code <prefix>_tokens}, shared by all locks under
 *       the prefix (no lock name maps to it: {@code _t} is no escape). Each holder is granted only
 *       after the previous one left or was expelled, so its marker follows the previous holder's in
 *       that partition and its token is larger. Offsets survive the deletion of a consumer group
 *       (whose generation restarts) and the retention of old records, but not the deletion of the
 *       topic: never delete the token topic while a resource still checks tokens. One partition for
 *       all locks makes its leader a dependency of every grant; it is replicated like a lock
 *       topic.</li>
 * </ul>
 *
 * <p>Semaphores ({@link io.latchkey.spi.SemaphoreBackend}), the lock's machinery with more partitions:
 * <ul>
 *   <li><b>Mapping.</b> Semaphore {@code name} of {@code N} permits is the topic
 *       {@code <prefix>_s<name mapped as a lock name>} with {@code N} partitions and the consumer group of
 *       the same name; no lock topic and not the token topic takes that form ({@code _s} is no escape).
 *       Each acquire is one member (a {@code GroupMember}, as a lock's contender: the same polling thread,
 *       evidence, renewal and release); the member assigned a partition holds a permit, and its slot is
 *       the partition's number.</li>
 *   <li><b>Assignment.</b> A client-side assignor of the classic protocol ({@code SlotAssignor},
 *       cooperative): a member holds at most one partition, an owner keeps its own through every
 *       rebalance (of two claims the later generation wins), and a partition nobody owns goes to the
 *       member that asked earliest (the wall-clock time of its request rides in its subscription).
 *       Members beyond {@code N} get none and wait in the group, as a lock's waiters do. Kafka's sticky
 *       assignor would give one member several partitions while the group has fewer members than
 *       partitions.</li>
 *   <li><b>The number of permits</b> is the topic's number of partitions: created with {@code N} on
 *       first use, read (and cached with the topic) once per client; a request with another number is an
 *       {@link IllegalArgumentException} naming the semaphore, the topic and both numbers. The topic
 *       stays after use, as a lock's does, so the number is fixed for the name until the topic is
 *       deleted while nobody uses it. Partitions an operator adds are never handed out (the assignor
 *       uses the smallest number of permits its members ask for).</li>
 *   <li><b>Fencing.</b> The token is a grant marker's offset in the token topic, as a lock's: a slot's
 *       next holder is assigned the partition only once the previous one left or was expelled (the
 *       cooperative protocol never gives a partition still claimed to another member), so its marker
 *       follows; tokens grow per slot, and per name too.</li>
 *   <li><b>Holders rejoin late.</b> A rebalance's join phase waits for every member to rejoin or for
 *       its session to end, and a member with a JoinGroup pending sends no heartbeats. With one holder
 *       (a lock) the only silent member that can hold up the phase is the holder itself; with several,
 *       a holder that rejoined at once while another member was silent (paused, killed, cut off) would
 *       see its evidence stop a session after its last heartbeat, minus the margin, before the phase
 *       ends, and report a loss it did not suffer. So a holder heartbeats on through a rebalance (the
 *       coordinator keeps its session alive meanwhile) and rejoins only the safety margin, three
 *       heartbeat intervals and a tenth of the timeout after it heard of it; it polls only then, to
 *       finish a join or run a loss callback, and every few seconds ({@code PermitRejoin}). The consumer
 *       tells neither that a rebalance began nor its generation before its next poll, which would rejoin
 *       at once; both are read from kafka-clients' classic coordinator by reflection (checked against
 *       4.3.1), and without them a holder rejoins at once, with a warning. The cost: while permits are
 *       held every rebalance of the group, and so every hand-over, takes that much longer (about 1.25 s
 *       with the contract's heartbeat of 50 ms, 4.1 s with the default heartbeat of 1 s at a 6 s lease). What
 *       remains: a holder that goes silent in the last part of another holder's delay can still cost
 *       that one its permit; a loss signal, never two valid holders of a slot. {@code handover=rejoin}
 *       applies to locks only.</li>
 *   <li><b>A short wait beside holders.</b> Members that join a moment apart land in successive
 *       rebalances, and a rebalance while permits are held ends only when the holders rejoin, their delay
 *       (above) after they heard of it at their next heartbeat. A member whose wait ended without a permit
 *       therefore asks the coordinator how many members hold one (DESCRIBE of the group, at the end of a
 *       rebalance that did not grant it, or half the timeout after the deadline if none ended): with all
 *       {@code N} held it gives up; with one free it stays for the rebalance in flight, so that members
 *       starting together with a zero wait are all granted while permits last. The stays count from the
 *       later of the deadline and the start of the member's own join: its set-up (the topic's lookup
 *       within the timeout, the consumer's construction, slow in a cold JVM on a loaded machine) is not
 *       taken from the rebalance it waits for. Bounds, for
 *       {@code tryAcquire(wait)}: on a full semaphore {@code wait + timeout}, as every backend; with a
 *       permit free, {@code wait} plus the set-up plus the longer of {@code timeout} and one rebalance, the heartbeat
 *       interval + the holders' rejoin delay + half the timeout. With the contract's options (lease 6 s,
 *       heartbeat 50 ms) that is 3.8 s, within the timeout; with the defaults (lease 30 s, heartbeat 1 s,
 *       rejoin delay 6.5 s) 10 s, twice the timeout: the price of holders that outlast a silent member
 *       before they rejoin. If the rebalance does not end by then (a silent member holds up its join
 *       phase) the call is empty. A lock's holders rejoin at once, so a lock's zero wait keeps the
 *       {@code timeout} bound and asks the coordinator only if no rebalance ended in half of it
 *       ({@code KafkaSemaphoreTest.zeroWaitBesideAHolderWithTheDefaultOptions},
 *       {@code KafkaLockTest.zeroWaitOnAFreeLock}).</li>
 *   <li><b>Cost and what stays.</b> A known semaphore name costs no admin request; an acquire is the
 *       member's join and one marker ({@code KafkaCostTest.knownSemaphoreCostsNoAdminRequest}); a try that
 *       ends without a permit adds a DESCRIBE of the group, one per rebalance it stays for. After
 *       release the member is gone; the topic (with its partitions), the group until the broker
 *       expires it empty, the markers in the token topic and the cache entry stay
 *       ({@code KafkaSemaphoreTest}).</li>
 * </ul>
 *
 * <p>Scheduled jobs: the {@code atLeast} bound of a request is kept by the holder's client, which stays
 * assigned the lock partition until the bound passes. If the holder's process ends earlier, its group
 * membership ends with its session, the lease minus one heartbeat interval after its last heartbeat,
 * whether the process exits without closing the client or is killed (a classic group does not drop a
 * member whose connection closes), and at once if the client is closed; the partition (the lock) then
 * goes to the next member before {@code atLeast}: Kafka has no expiry of its own that could keep it
 * ({@code KafkaAtLeastExitTest} shows the exit and the kill). Once per slot: the last completed
 * slot is a record on the lock's partition carrying the offset of its writer's marker there,
 * appended only while the member holds the partition; a reader counts it only if no grant marker
 * lies between its writer's marker and itself, so a record from a holder that lost the lock is
 * ignored (and its writer told). That marker is written to the lock's own partition when the holder
 * first reads or records a slot, and only while the broker still keeps the holder; see
 * {@code SlotRecords}.
 *
 * <p><b>Connect and a cold JVM</b> (contract rule 2, {@link io.latchkey.spi.Startup}): {@code timeout}
 * is the brokers'. Connect first sends an {@code ApiVersions} request with the JDK's own sockets to each
 * bootstrap server in turn and waits for any answer within {@code timeout} (a TLS listener closes the
 * connection instead, which counts too); then the admin client starts and describes the cluster and
 * the brokers' session bounds within the rest of it, plus a start-up allowance of 15 s while the Kafka
 * clients have never connected in this JVM, the admin calls' own timeouts set to the same bound.
 */
package io.latchkey.kafka;
