/**
 * The ZooKeeper backend of Latchkey, on Curator's {@code InterProcessMutex}: add
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
 * <p>Scheduled jobs: the {@code atLeast} bound of a request is kept by the holder's client, which keeps
 * its lock node (and session) until the bound passes: ZooKeeper has no expiry of its own for one node
 * (the session's timeout is shared by every lock of the client). If the holder's process exits earlier,
 * the ephemeral node goes with its session, at once when the client is closed and within {@code lease}
 * after the process exits without closing it (kill -9, {@code System.exit}), so the lock is free before
 * {@code atLeast}. The last completed schedule slot is recorded in the lock name's node, fenced by the
 * holder's lock node and token (see {@code SlotRecord}); that node then stays, as the record of what ran.
 */
package io.latchkey.zookeeper;
