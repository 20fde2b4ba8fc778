/**
 * Latchkey on Kafka: a lock is a single-partition topic whose consumer group decides the holder, a
 * semaphore of {@code N} permits a topic of {@code N} partitions with a consumer group per slot, each deciding
 * that slot's holder as a lock's group does.
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
 *   <li><b>Members.</b> One consumer per contender, from its join until it leaves, polled by a thread
 *       of its own ({@code latchkey-kafka-<topic>-<n>}) until its grant is confirmed and then by the
 *       client's one thread for holders ({@code latchkey-kafka-held-<n>}, running while the client holds
 *       something; {@code HeldPolls}). Waiters stay in the group until they are assigned the partition or
 *       their wait ends; holders are polled on while the business code runs, so
 *       {@code max.poll.interval.ms} never expels them. A zero wait still joins once and waits for that
 *       rebalance. Release closes the consumer on the releasing thread, which leaves the group at once.
 *       That is the protocol's cost, and it is per contender, not per client: each waiter is one
 *       {@code KafkaConsumer} with its polling thread, and each holder one with no thread of
 *       Latchkey's; each has the consumer's own heartbeat thread, which the group protocol keeps per
 *       member, and connections to the group coordinator and the partition's leader
 *       ({@code KafkaCostTest.heldLocksShareOnePollingThread}). Unless the application's settings ask for them ({@code metric.reporters},
 *       {@code enable.metrics.push}), a member's consumer registers no JMX MBeans and pushes no client
 *       metrics to the broker: it is the library's, not the application's, and the two took about 76 KB
 *       of heap per held lock, a third of it. A client waiting on ten locks at once runs twenty threads
 *       for them, and one holding ten, eleven; the shared layer admits one contender per lock name and client, which bounds it. The
 *       shared admin client, producer and (for scheduled jobs) slot reader add their own network
 *       threads, one each per client.</li>
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
 *   <li><b>No read-write locks.</b> {@code readWriteLock} is refused with the reason. A holder here is
 *       what a rebalance decides, and a rebalance completes only when every member has rejoined. A
 *       read-write lock in one group (a reader taking one of R partitions, a writer all R) would make
 *       every reader's arrival a rebalance that every reader holding must rejoin; a holder sends no
 *       heartbeats while its JoinGroup is pending, so one waiter that crashed mid-join would cost every
 *       reader its lease. Keeping a group per reader, as semaphores keep a group per permit, avoids
 *       that, but a write would then join R groups, one after another, and a waiting writer could
 *       hold none of them against readers arriving meanwhile without a second mechanism. Neither is a
 *       lock we would offer as the others; a refusal that says why is better than a weaker lock.</li>
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
 *       member; see {@code HeartbeatEvidence}. A member assigned the partition holds it only once an
 *       offset commit of its generation has succeeded, and its first evidence dates from that commit:
 *       the coordinator renews a session at such a commit, but not at a follower's SyncGroup that finds
 *       the group stable, so an assignment whose JoinGroup answer was held up in a network cut may come
 *       with most of its session already spent ({@code KafkaGrantEvidenceTest}).</li>
 *   <li><b>What an acquire costs, and what is cached.</b> A lock name's topic is looked up (and
 *       created) with the admin client once; the client then keeps it known, the 1024 most recently
 *       used names (about 200 bytes each), so a name seen before needs no admin or metadata request of
 *       Latchkey's: the member's consumer joins the group (FindCoordinator, JoinGroup, SyncGroup,
 *       its own metadata for the subscription), the shared producer appends one marker when it is
 *       granted the partition, and the consumer commits once
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
 *       per-topic state for each job name, which is a short and fixed list. On the broker, besides the
 *       lock's topic, the emptied group keeps the last holder's commit (offset 0, its identity and
 *       token) until the broker expires it ({@code offsets.retention.minutes}, 7 days by default).</li>
 *   <li><b>Release</b> closes the member's consumer, which sends LeaveGroup, within half the timeout;
 *       a close that ran into that bound, or a member that heard no heartbeat answer for a while, is
 *       confirmed with the coordinator in the other half, and a release it cannot confirm is a
 *       {@code LockBackendUnavailableException} (the lock then ends with the session).</li>
 *   <li><b>Fencing.</b> The token is the offset of a marker record the member appends once assigned
 *       the partition to the only partition of the token topic {@code <prefix>_tokens}, shared by all
 *       locks under the prefix (no lock name maps to it: {@code _t} is no escape). It appends it before
 *       the commit that confirms the grant, so that the commit records the token
 *       ({@code GrantConfirmation}); only a member the coordinator still keeps can confirm, and the next
 *       holder is assigned the partition only after this one left or was expelled, so a holder's marker
 *       precedes the next holder's in that partition and its token is smaller. A member whose commit
 *       fails burns an offset; its next assignment appends another marker. Offsets survive the deletion of a consumer group
 *       (whose generation restarts) and the retention of old records, but not the deletion of the
 *       topic: never delete the token topic while a resource still checks tokens. One partition for
 *       all locks makes its leader a dependency of every grant; it is replicated like a lock
 *       topic.</li>
 *   <li><b>Who holds a lock</b> ({@code inspect}, and {@code Election.leader()} on it). The holder's
 *       identity (the {@code Holder} text: owner, client start, acquiring thread, and the moment of the
 *       request by the holder's clock, which {@code inspect} gives as {@code since}) is the metadata of the
 *       offset commit that confirms every grant, with the member's id in the group, the token and the
 *       session ({@code GrantMetadata}): no request of its own ({@code KafkaCostTest} keeps its numbers),
 *       at most about 3.1 KB, under the broker's default {@code offset.metadata.max.bytes} of 4096 (a
 *       broker with a lower limit gets the commit without the holder text, which then reads as
 *       unknown). The grant marker's value names it too, for a reader of the token topic. The group's
 *       own {@code client.id} and host were no place for it: the client id names the member (Latchkey
 *       sets it), the host is an address, and neither says which member's grant was confirmed.
 *       <p>Inspect sends a DESCRIBE of the lock's group and a fetch of its committed offset at once, with
 *       the shared admin client, bounded by the timeout (a dead broker: a
 *       {@code LockBackendUnavailableException} within it); a group that does not exist or is empty is
 *       free, and neither request creates a topic or a group of Latchkey's (on a cluster where no
 *       group was ever used, the coordinator lookup makes the broker create its own
 *       {@code __consumer_offsets}, as any group's first use does). The holder is the member assigned the
 *       lock's partition whose member id the committed metadata names. A member assigned but not yet
 *       confirmed by its commit holds nothing yet (its acquire has not returned): the lock reads as free
 *       for those milliseconds. The last holder's commit, which outlives it in the emptied group, names a
 *       member no longer there. While the group rebalances the coordinator reports no assignments; the
 *       committing member then holds if it is still a member, as the cooperative protocol never takes
 *       the partition from a member that stays (a member that lost the partition while keeping its
 *       member id, its JoinGroup answer lost in the network, reads as holding until the rebalance ends;
 *       its own lease has told it). <b>Waiters:</b> the members the same description lists other than the
 *       holder's member id; a waiter that gave up has left with its LeaveGroup, but the member of a killed
 *       client lingers, and counts, until its session times out, and while the group is PreparingRebalance or
 *       CompletingRebalance the list may hold members in flux. <b>Token:</b> exact, from the commit. <b>Time left</b>
 *       ({@code expiresIn}): the holder's session timeout, from its commit (the lease minus one
 *       heartbeat interval of the holder's client). Kafka does not report how much of a member's
 *       session is left; the coordinator keeps a silent member at most a session after its last
 *       heartbeat, so this is an upper bound. A commit of a Latchkey before this one (the member's
 *       client id alone) reads as held by an unknown holder without a token
 *       ({@code KafkaInspectTest}).</li>
 *   <li><b>Force release</b> ({@code forceRelease}, {@code ForceRelease}) reads the grant as inspect does, then
 *       removes the members of the lock's group with the admin client
 *       ({@code Admin.removeMembersFromConsumerGroup}, a LeaveGroup the coordinator takes at once): the lock
 *       is free on the broker when it returns. The admin API removes a single member only by its {@code group.instance.id}, which Latchkey's
 *       dynamic members have not, so it removes them all (KIP-571: a DESCRIBE of the group, then one LeaveGroup
 *       naming each member id); the waiters lose nothing but their member ids and join again at their next
 *       heartbeat, still waiting, a rebalance that grants one of them the lock with a new marker, so a higher
 *       token. The holder learns it at its next heartbeat (an unknown member id), within one heartbeat interval,
 *       as a loss whose message says it was removed from the group while its session still ran; its member
 *       then stops instead of joining again (any member that lost its partition does: it would otherwise be a
 *       candidate under a lease already lost). Cost: the two reads of inspect, a DESCRIBE and a LeaveGroup;
 *       for the group, one rebalance in which every waiter joins anew. On a broker with the default
 *       {@code group.initial.rebalance.delay.ms} (3 s) the emptied group waits that long for its first
 *       joiner, so the next grant may come that much later. A lock nobody holds costs the reads alone and
 *       is left as it is. A holder whose grant was read just before it released, and a waiter granted in
 *       between, would lose that grant: the removal ends whatever grant the group has then.</li>
 *   <li><b>Listing</b> ({@code list}, {@code HeldLocks}): one ListGroups of every broker for the groups
 *       with members (emptied groups, released names', are left out by the brokers), the lock names read back
 *       from the group ids under the prefix (semaphore slots' groups, the token topic and other applications'
 *       groups read as none), filtered and sorted; then, in name order, batches of at most 500 groups are
 *       described and their commits fetched, both at once, until {@code limit} have a holder as inspect
 *       decides it. So a page costs ListGroups on each broker plus two requests per batch, and the broker
 *       reads every group it keeps to answer. A name too long for a topic name keeps only its hash in the
 *       group id; a held one is named by the key of its grant marker, one read of the token topic each.</li>
 * </ul>
 *
 * <p>Semaphores ({@link io.latchkey.spi.SemaphoreBackend}), the lock's machinery once per slot:
 * <ul>
 *   <li><b>Mapping.</b> Semaphore {@code name} of {@code N} permits is the topic
 *       {@code <prefix>_s<name mapped as a lock name>} with {@code N} partitions, and slot {@code k} the
 *       consumer group of that name followed by {@code _k<k>}; no lock topic and not the token topic
 *       takes the topic's form ({@code _s} is no escape), and no topic the group's ({@code _k} is none).
 *       A client-side assignor of the classic protocol ({@code SlotAssignor}, cooperative) makes slot
 *       {@code k}'s group hand out partition {@code k} alone: its owner keeps it through every rebalance
 *       (of two claims the later generation wins), else the member that asked earliest gets it (the
 *       wall-clock time of its request rides in its subscription).</li>
 *   <li><b>An acquire</b> ({@code PermitRace}) starts a member ({@code GroupMember}, as a lock's
 *       contender) in every slot's group at once, keeps the first one granted, and lets the others
 *       leave before it returns, so that a slot one of them was granted meanwhile passes on at once and
 *       the client's next acquire finds them gone. Each member waits as a lock's member does, past the
 *       deadline for its first rebalance, so a zero wait asks every slot once. The acquire gets no permit
 *       when every member found its slot held; since a racing acquire may hold several slots for a moment,
 *       it then asks the coordinator once which slots' groups have a holder (one DESCRIBE of the
 *       {@code N} groups) and stays for a slot that has none, within {@code wait + timeout}. Each member
 *       reports to the lease only once chosen.
 *       <p>Why a group per slot and not one group for the semaphore: a rebalance waits for every member
 *       of its group to rejoin, and a member whose JoinGroup is pending sends no heartbeats. In one group
 *       with several holders, a holder that rejoined at once while another member was silent (paused,
 *       killed, cut off) lost its evidence before the silent member's session ended, a loss it did not
 *       suffer; holders that waited before rejoining made every hand-over wait too (5.2 s at a 6 s lease
 *       on the default heartbeat, against the contract's 2.9 s). With one holder per group, a slot's
 *       rebalance is a lock's: the holder rejoins at once, and a waiter takes a freed slot at its next
 *       heartbeat.</li>
 *   <li><b>Cost.</b> While it waits, an acquire is {@code N} members (a consumer each, with its polling
 *       and heartbeat threads, and a thread of the backend's pool waiting on it); once granted, one. Every
 *       join and leave rebalances one slot's group, so a waiter arriving or giving up costs {@code N}
 *       small rebalances; semaphores on Kafka suit a few permits. A known semaphore name costs no admin
 *       request; an acquire is the members' joins and one marker
 *       ({@code KafkaCostTest.knownSemaphoreCostsNoAdminRequest}); an acquire that finds every slot held
 *       adds the DESCRIBE above. After release the member is gone; the topic (with its partitions), the
 *       slots' groups until the broker expires them empty, the markers in the token topic and the cache
 *       entry stay ({@code KafkaSemaphoreTest}).</li>
 *   <li><b>The number of permits</b> is the topic's number of partitions: created with {@code N} on
 *       first use, read (and cached with the topic) once per client; a request with another number is an
 *       {@link IllegalArgumentException} naming the semaphore, the topic and both numbers. The topic
 *       stays after use, as a lock's does, so the number is fixed for the name until the topic is
 *       deleted while nobody uses it. Partitions an operator adds are never handed out (a slot's group
 *       hands out its slot only below the smallest number of permits its members ask for).</li>
 *   <li><b>Fencing.</b> The token is a grant marker's offset in the token topic, as a lock's: a slot's
 *       next holder is assigned the partition only once the previous one left or was expelled (the
 *       cooperative protocol never gives a partition still claimed to another member), so its marker
 *       follows; tokens grow per slot, and per name too. Unlike a lock's member, a slot's appends its
 *       marker after its confirming commit, once its acquire kept it: every slot's member of an acquire
 *       may be granted at once, and a marker each would cost requests for nothing. A slot's commit
 *       records the holder without a token, and instead the moment it was sent by the holder's clock
 *       ({@code confirmed=<epoch ms>}), from which inspect finds the marker. {@code handover=rejoin} applies to
 *       locks only.</li>
 *   <li><b>Who holds each slot</b> ({@code DistributedSemaphore.inspect}, {@code KafkaPermitInspection}). The
 *       holder is written where a lock's is: the metadata of the offset commit that confirms the slot's grant, in
 *       the slot's group, with the {@code Holder} text stamped on the acquiring thread, the member id and the
 *       session; no request of its own ({@code KafkaCostTest.knownSemaphoreCostsNoAdminRequest} keeps its
 *       numbers). Inspect sends a DESCRIBE of the semaphore's topic, a DESCRIBE of every slot's group and a fetch
 *       of their commits at once, with the shared admin client, bounded by the timeout; a topic that does not
 *       exist is a semaphore nobody used, all slots free, and a topic with another number of partitions than
 *       asked is the acquire's {@link IllegalArgumentException}. A slot is held as a lock is, by the member
 *       assigned its partition whose commit names its member id. <b>Token:</b> the offset of that member's grant
 *       marker, exactly the lease's {@code fencingToken()}: one read of the token topic with the slot reader,
 *       bounded by the timeout, from the first record stamped a minute before the earliest commit of the slots
 *       held (the marker follows its commit by the holder's clock; the minute covers a step of that clock, and a
 *       broker's own clock if the topic is set to stamp records on append) to the marker with the semaphore's
 *       name as key and the member's client id, unique to its acquire, as value; so the read costs the markers
 *       of all names appended since, a few while the slot was granted recently. A member whose marker is not
 *       there yet was granted but not kept yet by its acquire (which may let it go), and its slot reads as free,
 *       as a lock's member assigned but not confirmed does. A marker gone with the token topic's retention (a
 *       permit held past it, 7 days by default) leaves the slot held with an unknown token, as does a commit of
 *       an older Latchkey. <b>Time left</b>: the holder's session timeout from its commit, an upper bound as for
 *       a lock. <b>Since</b>: none of the broker's; the moment of the request the holder text carries
 *       ({@code HOLDER_AT_REQUEST}). <b>Waiters</b> are not counted per slot: a semaphore's waiters wait for every
 *       slot ({@code KafkaSemaphoreTest}).</li>
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
