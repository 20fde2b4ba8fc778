/**
 * The ZooKeeper backend of Latchkey, on Curator's {@code InterProcessMutex}: add
 * {@code io.latchkey:lock-zookeeper} and connect with
 * {@code zookeeper://[user:password@]host1:2181,host2:2181[/base/path][?lease=30s&timeout=5s&namespace=team]},
 * or wrap the application's own Curator client with
 * {@link io.latchkey.zookeeper.ZooKeeperLockProvider#client}. The shared options apply: {@code lease} is
 * the session timeout, {@code timeout} the connection timeout and the bound on one round trip,
 * {@code namespace} a prefix of the base path (default {@code /latchkey}), the URI's user and password
 * the digest identity that owns the lock nodes. See {@link io.latchkey.zookeeper.ZooKeeperLockProvider}
 * for the layout, the guarantees and their reasons.
 *
 * <p>Scheduled jobs: the {@code atLeast} bound of a request is kept by the holder's client, which keeps
 * its lock node (and session) until the bound passes. If the holder's process exits earlier, the
 * ephemeral node goes with its session, at once on a clean close and within the session timeout
 * ({@code lease}) after a crash, so the lock is free before {@code atLeast}. Schedule slots are not
 * recorded yet: a request with a slot fails with a {@code LockException}.
 */
package io.latchkey.zookeeper;
