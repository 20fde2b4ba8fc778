/**
 * The ZooKeeper backend of Latchkey, a lock recipe of its own on ephemeral sequential nodes through
 * Curator: add
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
 * takes its proof from one {@code sync} sent just before its last children read, in the same round
 * trip. A held lock is then renewed by a {@code sync} and an {@code exists} every quarter of the session
 * timeout, and watched through the watch its children read left (no request of its own).
 *
 * <p><b>Waiters and expired sessions.</b> A waiter queued behind a node whose session expired (the
 * holder's process paused or cut off past its session) keeps waiting within its wait: the server
 * deletes that node with its session, the watch wakes the waiter, and it is granted the lock once it is
 * free. A waiter whose own session expired while its process was paused finds its node gone (or still
 * there under the old session) when it wakes: it deletes what is left, creates a node in the new
 * session and queues again, within its wait; only when the wait is over is it told that this process
 * was paused, or that its session ended.
 *
 * <p>Scheduled jobs: the {@code atLeast} bound of a request is kept by the holder's client, which keeps
 * its lock node (and session) until the bound passes: ZooKeeper has no expiry of its own for one node
 * (the session's timeout is shared by every lock of the client). If the holder's process exits earlier,
 * the ephemeral node goes with its session, at once when the client is closed and within {@code lease}
 * after the process exits without closing it (kill -9, {@code System.exit}), so the lock is free before
 * {@code atLeast}. The last completed schedule slot is recorded in the lock name's node, fenced by the
 * holder's lock node and token (see {@code SlotRecord}); that node then stays, as the record of what ran.
 */
package io.latchkey.zookeeper;
