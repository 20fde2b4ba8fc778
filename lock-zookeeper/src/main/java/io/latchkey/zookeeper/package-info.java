/**
 * The ZooKeeper backend of Latchkey, a lock recipe and a semaphore recipe of its own on ephemeral
 * nodes through Curator: add
 * {@code io.latchkey:lock-zookeeper} and connect with
 * {@code zookeeper://[user:password@]host1:2181,host2:2181[/base/path][?lease=30s&timeout=5s&namespace=team]},
 * or wrap the application's own Curator client with
 * {@link io.latchkey.zookeeper.ZooKeeperLockProvider#client}. The shared options apply: {@code lease} is
 * the failover bound (the session timeout asked for is {@code lease} minus one server tick, see
 * {@link io.latchkey.zookeeper.ZooKeeperLockProvider}), {@code timeout} the connection timeout and the
 * bound on one round trip,
 * {@code namespace} a prefix of the base path (default {@code /latchkey}), the URI's user and password
 * the digest identity that owns the lock nodes. See {@link io.latchkey.zookeeper.ZooKeeperLockProvider}
 * for the layout, the guarantees and their reasons.
 *
 * <p><b>The recipe</b> ({@code Acquisition}). An acquire creates an ephemeral sequential node
 * {@code <lock path>/_c_<uuid>-lock-<seq>} (Curator's protected mode, so a create whose answer was lost
 * with the connection is found again rather than duplicated) and reads the lock path's children; the
 * lowest {@code lock-} node holds the lock, and each other waiter watches only its predecessor, so a
 * release wakes one waiter, in creation order. The names are those of Curator's
 * {@code InterProcessMutex}, which therefore excludes Latchkey's locks on the same path and the other
 * way round. It runs on the caller's thread (no thread per acquire) and every answer is awaited at most
 * until the caller's deadline plus {@code timeout}; closing a lease deletes its node from any thread.
 *
 * <p><b>Requests.</b> An uncontended lock and unlock is three requests, create, getChildren and delete,
 * two of them writes (counted by the server in {@code ZooKeeperRequestCountTest}). The grant is
 * confirmed from the create's own {@code Stat}: the create is a write the leader orders only for a live
 * session, so a node owned by the client's current session proves the session alive after the create
 * was sent, and the validity deadline (contract rule 7) counts the negotiated session timeout from that
 * send time; the fencing token is the node's {@code czxid} from the same {@code Stat}. The {@code sync}
 * that used to precede an {@code exists} protected against a follower's stale read being taken as
 * proof of a live session; the create needs no such protection, and the children read after it can
 * only be stale towards more nodes (every lower node was created before ours, and the follower has
 * applied our create), which makes a waiter wait, never a wrong grant. A waiter granted after waiting
 * dates its grant from its create too while that is younger than a quarter of the session timeout (a
 * contended lock's waiters, granted within milliseconds, send no {@code sync}); after a longer wait it
 * takes its proof from one {@code sync} sent just before its last children read, in the same round
 * trip ({@code Acquisition} says why). A held lock's own node is watched with an {@code exists} that the
 * session's first probe after the grant sets, once: a lock held for less than a quarter of the session
 * timeout sends nothing more than create, getChildren and delete, as a contended lock's holders do. The
 * client renews all its leases together by one {@code sync} and one {@code exists} every quarter of the
 * session timeout ({@code SessionProbe}): two requests a tick whether it holds one lock or ten thousand,
 * since every lease rides on the one session, and a watch tells a deleted node before the probe's
 * answer; a node deleted behind its holder's back before the first probe (a force release) is told by
 * that probe's {@code exists}.
 *
 * <p><b>Waiters and expired sessions.</b> A waiter queued behind a node whose session expired (the
 * holder's process paused or cut off past its session) keeps waiting within its wait: the server
 * deletes that node with its session, the watch wakes the waiter, and it is granted the lock once it is
 * free. A waiter whose own session expired while its process was paused finds its node gone (or still
 * there under the old session) when it wakes: it deletes what is left, creates a node in the new
 * session and queues again, within its wait; only when the wait is over is it told that this process
 * was paused, or that its session ended.
 *
 * <p><b>Who holds a lock</b> ({@code LockInspection}). Every lock node's data is the
 * {@link io.latchkey.Holder} text of the acquiring client and thread ({@code owner=... started=...
 * thread=...}), written by the create that queues it, so it costs no request: the counts above stay.
 * (It used to be the lock name, which nothing read.) Read-write lock nodes carry it too, and a semaphore's
 * slot nodes (see below). {@code inspect} reads, and only reads: a {@code sync} and the lock path's children in
 * one round trip (no lock path: free, and nothing is created), then {@code getData} of the lowest
 * {@code lock-} node, the holder by the recipe's rule, even in the instant before its own acquire has
 * seen so. A node released between the two reads is passed for the next listed one, which then is the
 * lowest; every answer is awaited within {@code timeout} in all, and a silent ensemble is a
 * {@link io.latchkey.LockBackendUnavailableException}. Data that is no holder text (a node of an older
 * Latchkey, or of a plain Curator mutex, which writes the client's address) is a holder the grant does
 * not name. The token is that node's {@code czxid}, the very token of its lease, and so an election's
 * term; {@code since} is its {@code ctime}, the server's clock when the create queued it, which is the
 * grant for an acquire that did not wait and earlier for one that did ({@code BACKEND_AT_REQUEST}). How long the grant outlives a silent holder is not reported: it is the holder's session timeout
 * plus up to a tick, and ZooKeeper tells a client only its own session's timeout, never another's (the
 * holder may use another {@code lease}, or be a plain Curator client); no bound this client could state
 * would be the backend's record, so {@code expiresIn} is empty. The waiters counted are the other
 * {@code lock-} nodes of the same children read, including the node of a waiter whose session died until
 * the server expires that session (ZooKeeper does not tell whether another session is alive, so none is
 * filtered).
 *
 * <p><b>Operators</b> ({@code ZooKeeperAdmin}). {@code forceRelease} reads the grant as {@code inspect}
 * does and deletes exactly that lowest {@code lock-} node, with the version it read (read again, three
 * times at most, if it left or changed first): the holder learns it as a loss at once from its watch,
 * and the waiter behind it is granted with a higher {@code czxid}.
 * {@code list} reads the base path's children (the encoded lock names; the semaphore and read-write
 * subtrees map to no lock name) and, in name order, which of them hold a {@code lock-} node, until the
 * page is full: one round trip, then one per batch of names. Neither creates a node. A name whose
 * encoding is longer than 200 characters is stored under a hash and cannot be listed.
 *
 * <p>Scheduled jobs: the {@code atLeast} bound of a request is kept by the holder's client, which keeps
 * its lock node (and session) until the bound passes: ZooKeeper has no expiry of its own for one node
 * (the session's timeout is shared by every lock of the client). If the holder's process exits earlier,
 * the ephemeral node goes with its session, at once when the client is closed and within {@code lease}
 * after the process exits without closing it (kill -9, {@code System.exit}), so the lock is free before
 * {@code atLeast}. The last completed schedule slot is recorded in the lock name's node, fenced by the
 * holder's lock node and token (see {@code SlotRecord}); that node then stays, as the record of what ran.
 *
 * <p><b>Read-write locks</b> ({@code Acquisition} in its read and write modes, {@code ZooKeeperModeLease}).
 * A read-write lock is the container node {@code <base>/@rw/<name>} (no lock name maps to {@code @rw}),
 * holding ephemeral sequential nodes with the names Curator's {@code InterProcessReadWriteLock} gives
 * them, {@code _c_<uuid>-__READ__<seq>} and {@code _c_<uuid>-__WRIT__<seq>}: Curator's read-write lock on
 * that path and ours exclude each other, and their readers share. A writer holds when no node is below
 * its own, a reader when no write node is; each waits on the one node that blocks it, so readers never
 * wake each other and a reader that comes after a waiting writer queues behind it. The token is the
 * node's {@code czxid}, one growing sequence for both modes. Everything else (evidence, loss, bounds,
 * the guaranteed delete of an abandoned node, the container's cleanup) is the lock's; no schedule slot
 * is recorded with a read-write lock.
 *
 * <p><b>Who holds a read-write lock</b> ({@code ReadWriteInspection}). Each read and write node's data
 * is the holder text, written by the create that queues it, as a lock node's (no request more).
 * {@code inspect} reads, and only reads, as a lock's: a {@code sync} and the children of
 * {@code <base>/@rw/<name>} in one round trip (no node: free, and nothing is created), then, sent
 * together, a {@code getData} of each node up to and including the lowest write node; every answer within
 * {@code timeout} in all, a silent ensemble a {@link io.latchkey.LockBackendUnavailableException}. Who
 * holds is decided by the very rule the acquire grants by ({@code Acquisition.blocker}), applied to the
 * nodes found there: the read nodes below the lowest write node hold, oldest first, or that write node
 * alone if it is the lowest; a writer waiting behind readers, and every reader queued behind it, hold
 * nothing and are not listed (nor read). A node released between the reads is passed over, and blocks
 * nobody since it is gone for good; a node created after the children read sits above every node listed
 * and blocks none of them. Only if the lowest write node listed was gone too are the nodes behind it read
 * the same way, and only if every node listed was gone are the children read again (three times at most).
 * Per held node, as for a lock: the holder text (a Curator read-write lock's node, which carries the
 * client's address, names no holder), the {@code czxid} as the token of its lease, the {@code ctime} as
 * {@code since} ({@code BACKEND_AT_REQUEST}: the server's clock when it queued, which is the grant for a
 * request that did not wait) and no {@code expiresIn}, since ZooKeeper does not tell another session's
 * timeout. A read nested in its thread's write grant has no node: the shared layer's, it is that grant.
 *
 * <p><b>Semaphores</b> ({@code PermitAcquisition}, {@code ZooKeeperPermit}). A semaphore of {@code N}
 * permits is the container node {@code <base>/@semaphores/<name>} (names mapped as lock names; no lock
 * name maps to {@code @semaphores}, since {@code @} is always encoded, so a lock and a semaphore of one
 * name never meet), whose data is {@code N}, written once by the first waiter that finds the node
 * missing. A waiter creates an ephemeral sequential {@code _c_<uuid>-wait-<seq>} in it and reads its
 * children and number of permits; a different stored number is an {@link java.lang.IllegalArgumentException} naming
 * the semaphore, its path and both numbers. With {@code free} the number of permits minus the
 * ephemeral {@code slot-<k>} nodes present, the waiters at the first {@code free} positions take the
 * lowest free slot, each in one transaction that creates {@code slot-<k>} (failing if another holder
 * has it: the next one is tried), writes the waiter's name and the holder text into it and deletes the
 * waiter; the first
 * waiter not admitted watches the children, each later one its predecessor, so a release wakes one
 * waiter. The fencing token is the slot node's {@code czxid}: per slot, every grant creates the node
 * anew, and transaction ids only grow, across server restarts, session expiry and the container's
 * deletion, so no token counter is kept. A permit is a lock's lease in everything else: its evidence
 * from the transaction's send time (a write of the live session), the same renewal, the same
 * {@code SUSPENDED}/{@code LOST} handling, a permit on an expired session lost with it, and a waiter
 * whose session expired queueing again within its wait. Its release deletes the slot only through the
 * session that owns it: the next holder takes the same path, which Curator's guaranteed delete, retrying
 * in a later session, could otherwise remove. Once no permit is held or asked for, the container manager
 * deletes the semaphore's node (and with it the number of permits) and then {@code @semaphores}.
 * An uncontended acquire and release is four requests (create, getChildren, the transaction, delete),
 * three of them writes ({@code ZooKeeperRequestCountTest}); the number of permits is read with a
 * getData once per client and incarnation of the semaphore's node (the children read reports the
 * node's {@code czxid}, and its data never changes).
 *
 * <p><b>Who holds each permit</b> ({@code PermitInspection}). A slot node's data is the name of the
 * waiter node that took it, then, on a line of its own, the {@link io.latchkey.Holder} text of the
 * acquiring client and thread, written by the setData of the transaction that grants: no request of its
 * own, so the counts above stay. The waiter's name stays first because an acquisition whose answer was
 * lost with the connection finds its own slot by it; a slot written by an older Latchkey holds that name
 * only and names no holder. {@code inspect} of a semaphore reads, and only reads, in two round trips: a
 * {@code sync} and the semaphore node's children (no node: every slot free, and nothing is created),
 * then a {@code getData} of each {@code slot-<k>} below the number of permits and, last, of the
 * semaphore's node, refusing another number of permits with the acquire's
 * {@link java.lang.IllegalArgumentException}; every answer within {@code timeout} in all, a silent
 * ensemble a {@link io.latchkey.LockBackendUnavailableException}. Per held slot: the holder text; the
 * token is the slot node's {@code czxid}, the very token of its permit; {@code since} is its
 * {@code ctime}, the grant by the server's clock, since the slot node is created by the transaction that
 * grants ({@code BACKEND_AT_GRANT}, unlike a lock node, which is created when it queues); and
 * {@code expiresIn} is empty, as for a lock: the slot goes with its holder's session, whose timeout
 * ZooKeeper does not tell another client. A slot released between the reads is free; a semaphore node
 * deleted meanwhile (by the container manager, once no slot was left) reads as every slot free.
 *
 * <p><b>Why not Curator's {@code InterProcessSemaphoreV2}.</b> Its leases are ephemeral sequential
 * nodes without a slot: a lease cannot say which of the {@code N} permits it holds, so there is no
 * {@code slot()}, no "one valid holder per slot" to show and no resource fenced per slot; its lease
 * node's {@code czxid} would order the grants of the whole name, which fences no better than a token
 * per slot and says nothing about which holder a slot's resource should expect. Each client passes its
 * own {@code maxLeases}, and clients that disagree are not refused: each counts against its own
 * number (or a {@code SharedCount} node that stays on the server). Every acquire takes an internal
 * {@code InterProcessMutex} and, holding it, waits for the lease count to drop: a mutex create,
 * children read and delete around the lease's own create and children read, more requests than this
 * recipe, and a waiter paused while holding that mutex stalls every acquirer of the name until its
 * session expires. Its waits also run on Curator's blocking calls rather than within the caller's
 * deadline plus {@code timeout}. So the semaphore is a recipe of its own beside the lock's, sharing the
 * lock's lease, evidence, session and bounds machinery.
 *
 * <p><b>Connect and a cold JVM</b> (contract rule 2, {@link io.latchkey.spi.Startup}): {@code timeout}
 * is the server's. Connect first runs its own session handshake ({@code ServerProbe}) with the JDK's
 * sockets within {@code timeout}; then Curator opens its session and prepares the base path within
 * the rest of it (the time spent loading and building Curator not counted), plus a start-up allowance
 * of 15 s while Curator has never connected in this JVM: a server that answers the probe and then
 * freezes fails connect within {@code timeout} in a warm JVM.
 */
package io.latchkey.zookeeper;
