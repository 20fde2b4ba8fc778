/**
 * The Redis backend of Latchkey: its own grant, release and renewal scripts, run through Redisson, on
 * the keys of Redisson's fenced lock ({@code RFencedLock}); semaphores on keys of their own, by scripts of
 * the same kind.
 *
 * <p>Connect with {@code redis://[user:password@]host[:6379][/database]}, {@code rediss://...} (TLS),
 * {@code redis-sentinel://[user:password@]host1[:26379],host2[:26379]/masterName[/database]} or
 * {@code redis-cluster://[user:password@]host1[:6379],host2[:6379],...} ({@code rediss-cluster://} over TLS), or hand
 * an existing {@code RedissonClient} to {@link io.latchkey.redis.RedisLockProvider#client}. Options and
 * their defaults are listed on {@link io.latchkey.redis.RedisLockProvider}.
 *
 * <h2>How a lock is kept</h2>
 * A lock named {@code n} is the hash key {@code <namespace>:n} (namespace {@code latchkey} by default),
 * whose field of the owner names it: Redisson's client id plus an owner id taken per grant, not the
 * calling thread, so any thread may close a lease. Beside it the same HSET of the grant writes the
 * holder's identity ({@code latchkey:holder}, the text of {@link io.latchkey.Holder}), the grant's
 * token ({@code latchkey:token}) and the moment of the grant by the server's {@code TIME}
 * ({@code latchkey:since}, ms), which {@code inspect} reads back with the key's {@code PTTL} in one
 * read-only script; Redisson's lock scripts read only their owner's field, so the three extra fields
 * disturb neither side, and a key held through Redisson shows as held by {@code Holder.UNKNOWN}. The waiters
 * {@code inspect} reports, read by the same script, are the entries of the lock's waiter queue (see below) not
 * yet stale at the server's {@code TIME}: the acquires that wait with a wait left, not the holder (its grant
 * takes its entry out), not a {@code tryLock()} without a wait (never queued), and a waiter gone without leaving
 * until its entry goes stale (within its next retry of its own plus one {@code timeout}). The grant script takes the key only if it does not
 * exist, increments the counter {@code redisson_lock_token:{<namespace>:n}}, which never expires, and
 * returns it as the fencing token, so tokens rise with every grant of the name whatever happened to
 * the lock key; it sets the key's time to live to {@code lease} and returns the {@code PTTL} it then
 * reads. That answer is the grant's first confirmation: the lease is valid until
 * {@code sentAt + PTTL - safetyMargin}, where {@code sentAt} was taken before the grant was sent and so
 * precedes the server's expiry clock. These are the very keys, field format and counter of Redisson's
 * {@code RFencedLock}, which earlier versions of this backend used: a lock held through an older
 * Latchkey and one held through this one exclude each other, and the tokens go on rising. This backend
 * is the key's only renewer (Redisson's watchdog plays no part): every
 * {@code (lease - safetyMargin) / 3} a script checks that the key still holds its owner, extends it
 * to the {@code lease} and reads its {@code PTTL}, and reports that to the shared layer; the checks of
 * every lock, permit and read-write grant a client holds go together, one script per hash slot (outside a
 * cluster, one for up to 500 grants) at most twice a period, each grant checked exactly as alone
 * ({@code RedisRenewals}); the lease is
 * signalled lost at once when the key no longer names its owner. Redis errors during a check are
 * silence, never a confirmation: the deadline then runs out on its own.
 *
 * <h2>Operations on the server</h2>
 * An uncontended lock+unlock is two script calls, the grant and the release (rule 7's confirmation
 * comes with the grant); a held lock adds one script call per renewal period, and many held locks of one
 * client add at most two a period between them outside a cluster (one per hash slot and round on a
 * cluster), permits and read-write grants among them. A waiter that finds the
 * lock held is queued by that same attempt in the sorted set {@code latchkey_waiters:{<namespace>:n}},
 * scored by the moment its entry goes stale (its next retry of its own plus one {@code timeout}, in
 * server time); it subscribes to its client's channel {@code latchkey_wake:{<namespace>:n}:<client id>}
 * and tries once more, so that a release between its first attempt and its subscription is not missed.
 * The client's waiters on the lock share that subscription, and the client keeps it a {@code timeout}
 * after the last of them; a waiter whose client has it joins before its first attempt and needs neither
 * the subscription nor the second attempt. The release deletes the key and publishes, on the channel of
 * the live waiter whose entry goes stale first, that waiter's owner field; only that waiter tries again
 * (a client that hears an entry none of its waiters has drops it and wakes the next one; see
 * {@code RedisContender}). So a hand-over costs the release and one grant however many clients
 * wait (Redisson's {@code RLock} has every waiting client retry on every release;
 * {@code RedisOperationCountTest} counts both with {@code INFO commandstats}). This is not a fair lock:
 * an arriving client may take a free lock before the woken waiter does, which then queues again. A waiter
 * never depends on the message alone: it also tries again when the holder's key would expire (the
 * {@code PTTL} its last attempt read) and at the end of its wait, and a waiter that gave up leaves the
 * queue with that last attempt; one that died drops out when its entry goes stale, so a release wakes a
 * dead waiter at most until then, while the others still retry on their own. The release also
 * publishes Redisson's unlock message on {@code redisson_lock__channel:{<namespace>:n}}, so waiters of an
 * older Latchkey are woken as before; a waiter of this version learns of an older holder's release at
 * its own retry. (When the key contains a brace, Redisson's rule is followed: {@code prefix:key}
 * without added braces.)
 *
 * <h2>Force release and listing</h2>
 * {@code forceRelease} is one script that reads the grant as {@code inspect} does and deletes the lock key
 * alone, then wakes the first live waiter as a release does: the token counter stays, so the next token is
 * higher, and the holder's next check (within {@code (lease - safetyMargin) / 3}) finds its owner gone and
 * signals the loss. {@code list} walks every primary's whole key space with {@code SCAN ... MATCH
 * <namespace>:<prefix>* COUNT 1000} (on a cluster a second walk for keys tagged by a brace in the name), so
 * it costs one round trip per thousand keys of the database however few match, then one read-only script per
 * name it takes for the page, confirming that the key is still a hash; it is meant for an operator, not a hot
 * path.
 *
 * <h2>Read-write locks</h2>
 * A read-write lock named {@code n} ({@link io.latchkey.LockClient#readWriteLock}) lives in keys under the
 * semaphore's kind of hash tag, beginning with {@code latchkey_rw} so that no lock or semaphore key meets
 * them: the sorted set {@code latchkey_rw_readers:<tag>} of readers' owner ids, each scored by its expiry in
 * the server's milliseconds ({@code TIME} in the scripts), so that every reader's grant expires on its own and
 * one reader's crash never frees another's; the key {@code latchkey_rw_writer:<tag>} of the writer, with the
 * lease as its time to live; one counter {@code latchkey_rw_token:<tag>} for both modes; the waiters in
 * {@code latchkey_rw_waiters:<tag>}, woken on {@code latchkey_rw_wake:<tag>}. Owner ids begin with {@code r:}
 * or {@code w:}, so the scripts tell a waiting writer from a reader: a read is refused while a writer holds
 * or waits (writers are not starved), a write while anyone holds; a release that leaves nobody holding wakes
 * the first waiting writer, or else every waiting reader, and one that leaves readers holding wakes nobody;
 * a writer that stops waiting wakes the readers it held back ({@code RedisReadWriteWakeTest}). Renewal moves only the holder's own entry; once every grant is released
 * only the token counter remains. See {@code RedisReadWrite}.
 *
 * <p>A grant, the writer key's value or the reader's entry in the sorted set, is the owner id, the token, the
 * grant's moment by the server's {@code TIME} (ms) and the holder's identity (the text of
 * {@link io.latchkey.Holder}), a space apart, as a permit's slot key: written by the one {@code SET} or
 * {@code ZADD} that grants, with the {@code TIME} the grant script read anyway (no round trip and no command
 * more). A holder names its entry by that text in its checks and its release, which it rebuilds from the
 * token and the time the grant script returns; the undo of an attempt whose answer was lost knows only its
 * owner id, and looks among the readers for the entry that begins with it and a space (an owner id holds no
 * space). A writer key of an older version holds the owner id alone and is still released as its owner's.
 * {@link io.latchkey.DistributedReadWriteLock#inspect()} is one read-only script over the writer key and the
 * readers' sorted set (one hash tag, so one script on a cluster too), sent as a plain {@code EVAL} to the
 * primary as a lock's {@code inspect} is and bounded by {@code timeout}. It lists the grants that hold by the
 * grant script's own rule: the writer while its key exists, with its {@code PTTL}; else each reader whose
 * score lies ahead of the server's {@code TIME}, with the time until that score, oldest first by token. A
 * request that waits is only in the waiter queue, which inspect does not read, so a writer queued behind
 * readers and a reader queued behind a waiting writer are not listed. Each grant shows the holder and the
 * token it wrote (the token its lease gave) and the grant's {@code TIME} as its time
 * ({@code BACKEND_AT_GRANT}), unchanged by renewals; a grant of an older version, its owner id alone, shows
 * as held by an unknown holder, with no token and no time. Readers beside a writer key could only come of a
 * server clock that went back (every request is refused then, because of the writer): inspect lists the
 * writer. It writes nothing: a name nobody used stays without keys.
 *
 * <h2>Semaphores</h2>
 * A semaphore named {@code n} of {@code N} permits ({@link io.latchkey.LockClient#semaphore}) lives in
 * keys that all carry the hash tag {@code {<namespace>:n}} (when that holds a brace:
 * {@code {<16 hex digits of its SHA-256>}<namespace>:n}), on a single server as on a cluster, so that its
 * scripts run in one hash slot: slot {@code k} is the key {@code latchkey_semaphore_slot:<k>:<tag>}, holding
 * its grant with the {@code lease} as its time to live, renewed and checked as a lock key is, every
 * {@code (lease - safetyMargin) / 3} with the client's other grants of its hash slot; the hash
 * {@code latchkey_semaphore:<tag>} holds the number of permits and lives at least as long as every slot; the
 * counter {@code latchkey_semaphore_token:<tag>} gives the tokens; the waiters queue in
 * {@code latchkey_semaphore_waiters:<tag>} and are woken on {@code latchkey_semaphore_wake:<tag>}, one per
 * release, as a lock's. A grant takes the lowest free slot. Lock names are taken as they are, so every key
 * after {@code <namespace>:} may be some lock's: the semaphore's keys begin with {@code latchkey_semaphore}
 * instead, which no lock key and no key beside a lock begins with, and a semaphore and a lock of one name are
 * independent.
 *
 * <p>The token: one counter per name, for all its slots, incremented by every grant and never expiring, so
 * tokens rise strictly per slot (and across the slots) across expiries, releases, clients and restarts
 * (the server's append-only file keeps the counter, as it keeps a lock's); one counter rather than one per
 * slot leaves one key behind whatever {@code N}. The number of permits: the grant script compares it with
 * the hash's and refuses another number while a slot of the recorded number is held, with an
 * {@link IllegalArgumentException} naming the semaphore and both numbers; once no permit is held the
 * release deletes the hash (or it expires with the last slot), and the name may be used with another
 * number. So once every permit is released only the token counter remains. An uncontended acquire+release
 * is two script calls ({@code RedisOperationCountTest}); a grant reads up to {@code N} slot keys and a
 * release checks all {@code N} in one {@code EXISTS}. The slot keys are named by the scripts from the
 * declared keys' tag rather than declared one by one (there may be a thousand): a cluster serves that as
 * the keys share the declared keys' slot. One limit follows: while a semaphore's hash slot migrates, a node
 * refuses a script that names a slot key it no longer has ("script attempted to access a non local key"),
 * which is not the {@code TRYAGAIN} an acquire tries again on, so such an acquire fails with that error
 * rather than waiting; a grant reads the slot keys before it writes one, so a grant refused so holds
 * nothing, and a release refused so expires within the lease. Loss, failover, restarts and the bounds of each call are
 * those of a lock, described below, with "the key" read as "the slot key".
 *
 * <p>A slot key's value, its grant, is written by the one {@code SET} of the grant script, in the same call
 * that grants (no round trip of its own): the holder's owner id, the token, the grant's moment by the
 * server's {@code TIME} (ms) and the holder's identity (the text of {@link io.latchkey.Holder}), a space
 * apart; an owner id holds no space and the identity comes last. The release and the check take the slot as
 * their owner's when its value is the owner id alone, as older versions wrote it, or begins with it and a
 * space, so a semaphore held through an older Latchkey and through this one at once keeps working.
 * {@link io.latchkey.DistributedSemaphore#inspect()} is one read-only script over the semaphore's hash and
 * its slot keys (all in its hash slot, so one script on a cluster too), sent as a plain {@code EVAL} to the
 * primary as a lock's {@code inspect} is and bounded by {@code timeout}: it refuses another number of
 * permits while a slot of the recorded number is held, as the grant does, and for each held slot gives the
 * holder and the token the grant wrote (the token is the one the permit's lease gave), the slot key's
 * {@code PTTL} as the time Redis keeps the slot for a silent holder, and the grant's {@code TIME} as its
 * time ({@code BACKEND_AT_GRANT}), unchanged by renewals. A slot key of an older version shows as held by
 * an unknown holder, with no token and no time. It writes nothing: a semaphore nobody used stays without
 * keys. An uncontended grant runs one {@code TIME} more than before, inside the same script.
 *
 * <h2>What Redis with replicas cannot guarantee</h2>
 * Redis replicates asynchronously, and sentinels promote a replica without asking whether it received
 * the latest writes. By default ({@code checkLockSyncedSlaves=true}) Redisson follows every acquire
 * with {@code WAIT} (renewals replicate asynchronously, without it); an acquire that no replica acknowledged fails and this backend
 * undoes it. That narrows the gap but does not close it: {@code WAIT} does not make a write durable;
 * with several replicas, one that did not acknowledge may be the one promoted; a replica may hold an
 * older expiry than the primary whose {@code PTTL} the holder's deadline came from, so the promoted
 * copy of the key can expire up to one renewal period early; and a failover slower than the lease lets
 * the key expire. So after a failover the new primary may not know a lock the old one granted, and
 * grant it again while the first holder still believes it holds it: unlike ZooKeeper or etcd, Redis
 * cannot promise that no two leases are valid at once across a failover. Two things cover this.
 * The loss signal: the first holder's next ownership check (within {@code (lease - safetyMargin) / 3}
 * of the new primary serving) finds its owner gone and completes {@link io.latchkey.Lease#lost()}; if
 * no check gets through, its validity deadline passes no later than the old primary would have
 * expired the key. That bounds the overlap; nothing can remove it, as a holder cannot learn of a loss
 * faster than it reaches the server. The fencing token: the counter is incremented in the same script
 * that grants the lock, and replicated with it, so a grant that survived into the new primary carries
 * its counter along, and any grant the new primary makes gets a larger token than every grant it
 * knows; a resource that rejects tokens lower than the highest it has seen refuses the stale holder's
 * writes once the new holder wrote. What remains uncovered is a counter increment lost with the old
 * primary although its grant was handed out (no {@code WAIT}, or the acknowledging replica was not
 * the one promoted): a new grant can then repeat that token, and a resource that accepts equal tokens
 * would take writes from both. Where that matters run one replica with {@code checkLockSyncedSlaves=true},
 * or a single primary with an fsynced append-only file that restarts instead of failing over.
 *
 * <h2>Redis Cluster</h2>
 * A lock lives on the primary that serves its key's hash slot, and everything said above of a primary
 * and its replicas holds for that primary and its replicas: the {@code WAIT} after a grant goes to it
 * and counts its replicas, and its loss is a failover like Sentinel's, with the same gap. A cluster
 * runs a script only if all its keys share one slot; the lock key, its token counter
 * ({@code redisson_lock_token:{<lock key>}}), its release channel and its slot record do, through the
 * hash tag Redisson puts around the lock key. A lock key that holds a brace of its own would break
 * that tag, so on a cluster it gets one in front: {@code {<16 hex digits of its SHA-256>}<namespace>:<name>}
 * (names without braces keep their keys; outside a cluster no key changes).
 *
 * <p>Resharding: a lock whose slot moves to another primary while it is held keeps its guarantees,
 * because Redis moves each key whole, with its owner and time to live, and the counter with it. While
 * the slot migrates, the holder's renewal (one key) is served by whichever node has the key, following
 * {@code ASK}, then {@code MOVED} once the slot has moved; the renewal of several locks of that slot in one
 * script, refused while their keys are split ({@code TRYAGAIN}), is sent again key by key. A grant or release names several keys (the
 * lock key, its counter, its waiters); while the slot migrates and one of them is not on the node asked,
 * because it sits on the other node or does not exist yet (the waiters of a lock nobody waited for),
 * Redis refuses the script ({@code TRYAGAIN}) rather than split it. An acquire
 * with a wait tries again until its wait ends, as it does while a restarted primary refuses commands
 * for its first two seconds ({@code CLUSTERDOWN}), while the client does not know a promoted
 * replica yet, and while a node it had a connection to restarts; what is still refused when the wait ends (at once for {@code tryLock()}) is a
 * {@link io.latchkey.LockBackendUnavailableException} that names the resharding; a release refused so
 * expires within the lease. The client reads the cluster's layout every second, so a promoted replica
 * or a moved slot is known within about a second even without a {@code MOVED} answer.
 *
 * <h2>Failover, restarts and the bounds of each call</h2>
 * A waiter is woken by the release's message on its client's wake channel, which Redisson subscribes to
 * again after a reconnect (tested across a restart by {@code RedisEdgesTest}; the queue survives a
 * restart with the server's append-only file). A lost connection is tried again 50 to 100 ms apart, and
 * a connection the peer closes during its handshake fails at once rather than at the timeout, so a
 * subscription comes back within about a tenth of a second of the server's return
 * ({@code RedisOutageWakeTest}); a release published before that is not heard, so a waiter also tries
 * again as soon as its channel is subscribed again. A call whose connection closes before Redis answered
 * fails then, not at the timeout ({@code RedisEdgesTest}); Redisson would wait the timeout for it, and
 * so would a cluster client's look at the cluster's layout when the node it asked was restarting,
 * leaving its waiters refused for the promoted replica it had not learnt of yet (seen: 5 s after a
 * rolling restart had ended). A release goes down the queue to the first waiter
 * that hears it, passing over the entries of waiters that could not leave the queue when their attempt
 * failed ({@code RedisLockTest}); and a waiter otherwise retries when the holder's key would expire
 * (the {@code PTTL} its last attempt read); Redis expires a key exactly at its time to live when it is
 * accessed, so a killed holder's lock is granted within {@code lease} plus that wake-up. Any failure to reach Redis
 * (refused, unresolvable, silent, paused, restarting) is a
 * {@link io.latchkey.LockBackendUnavailableException} within {@code timeout} for connect and
 * {@code wait + timeout} for an acquire; a release or renewal gets {@code timeout}. A call that gives
 * up far past its bound (by more than the bound again, at least a second) was not kept waiting by
 * Redis but paused with this whole process: its message says "this process was paused for at least N"
 * ({@link io.latchkey.spi.Pauses}) instead of asking to check the server.
 *
 * <p>Sentinels and cluster nodes report node addresses as they see them; clients behind NAT or outside
 * a container network map them with the {@code natMap} option.
 *
 * <p><b>Connect and a cold JVM</b> (contract rule 2, {@link io.latchkey.spi.Startup}): {@code timeout}
 * is the server's. Connect first sends {@code PING} with the JDK's own sockets to the server (the
 * sentinels, the cluster's seeds, in turn) and waits for any answer within {@code timeout}; then
 * Redisson starts and connects within the rest of it (a cluster: one timeout from Redisson's first
 * connection, as it tries the seeds one after another), plus a start-up allowance of 15 s while Redisson
 * has never connected in this JVM. Redisson's own connect and handshake timers run through its
 * start-up; one that fires while the allowance lasts is this JVM's slowness, and Redisson starts again,
 * its classes loaded by then. A {@code rediss://} server takes the plaintext {@code PING} for a broken
 * handshake and closes the connection, which counts as its answer (and may log a failed handshake).
 */
package io.latchkey.redis;
