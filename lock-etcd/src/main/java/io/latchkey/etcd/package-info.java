/**
 * The etcd backend of Latchkey, on jetcd: {@link io.latchkey.etcd.EtcdLockProvider} serves
 * {@code etcd://} and {@code etcds://} URIs and wraps an application's own jetcd client.
 *
 * <p>Each lock is a queue of keys under {@code <namespace><escaped name>/}, one per contender, ordered
 * by create revision (the design of Go's {@code concurrency.Mutex}); the holder is the key with the
 * lowest create revision, waiters watch only their predecessor, and the fencing token is the holder
 * key's create revision. Every key of a client is bound to the client's one etcd lease, kept alive with
 * a keepalive every third of its TTL: an uncontended lock+unlock is two RPCs and two Raft commits (a
 * transaction that queues the key and reads its predecessor, a transaction that deletes it), and a lease
 * that ends ends every lock of the client, signalled by the deadline of its last keepalive (rule 7).
 * Validity runs from the TTL etcd reports, and etcd issue 11456 is covered by etcd's refusal to bind a
 * key to a lease it no longer knows and a waiter's check of its own key: see {@code EtcdLockBackend}.
 *
 * <p>Scheduled jobs: the {@code atLeast} bound of a request is handed to etcd's own expiry when the
 * task ends early: the holder's key is bound to a lease of its own, never kept alive, whose TTL covers
 * the rest of {@code atLeast} (rounded up to whole seconds), so the lock stays taken until then even if the
 * holder's process exits, and goes at most a second and etcd's expiry check (500 ms) later. The last
 * completed schedule slot is the key {@code <namespace><escaped name>.slot} beside the lock's queue,
 * written in a transaction that requires the holder's key to still have the grant's create revision
 * (the fencing token) and the slot key not to have been written since the grant began.
 */
package io.latchkey.etcd;
