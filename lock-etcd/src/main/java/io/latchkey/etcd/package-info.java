/**
 * The etcd backend of Latchkey, on jetcd: {@link io.latchkey.etcd.EtcdLockProvider} serves
 * {@code etcd://} and {@code etcds://} URIs and wraps an application's own jetcd client.
 *
 * <p>Each lock is a queue of keys under {@code <namespace><escaped name>/}, one per contender, each
 * bound to an etcd lease of its own and ordered by create revision (the design of Go's
 * {@code concurrency.Mutex}); the holder is the key with the lowest create revision, waiters watch only
 * their predecessor, and the fencing token is the holder key's create revision. A grant is reported only
 * after {@code LeaseTimeToLive} shows the lease alive, with the TTL the server reports (etcd issue 11456).
 *
 * <p>Scheduled jobs: the {@code atLeast} bound of a request is kept by the holder's client, which keeps
 * its lease alive until the bound passes; if the process exits earlier, the lock goes when the etcd
 * lease expires ({@code lease} after the last keepalive). Schedule slots are not recorded yet: a
 * request with a slot fails with a {@code LockException}.
 */
package io.latchkey.etcd;
