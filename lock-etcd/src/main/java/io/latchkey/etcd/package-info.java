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
 * <p>Scheduled jobs: the {@code atLeast} bound of a request is handed to etcd's own expiry when the
 * task ends early: keepalives stop and the holder's key is bound to a lease whose TTL covers the rest
 * of {@code atLeast} (rounded up to whole seconds), so the lock stays taken until then even if the
 * holder's process exits, and goes at most a second and etcd's expiry check (500 ms) later. The last
 * completed schedule slot is the key {@code <namespace><escaped name>.slot} beside the lock's queue,
 * written in a transaction that requires the holder's key to still have the grant's create revision
 * (the fencing token) and the slot key not to have been written since the grant began.
 */
package io.latchkey.etcd;
