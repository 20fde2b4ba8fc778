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
 * <p>Who holds: each lock key's value is the holder text ({@link io.latchkey.Holder}: the client's
 * {@code owner}, its start, the acquiring thread, and the moment of the request by the client's clock,
 * which {@code inspect} gives as {@code since}: etcd keeps no time of a key) from a
 * {@link io.latchkey.spi.HolderStamp} made once per client, put in the transaction that queues the key, so it costs no request of its own (a
 * read-write lock's reader and writer keys carry it too, and a semaphore's slot key after its own fields, see below).
 * Nothing reads the value back to decide anything: keys are told apart by their names and create
 * revisions, so a key written by an older Latchkey, whose value was the lock name, still queues and
 * releases as before. {@code inspect} ({@code EtcdInspection}) reads the lock's prefix sorted by create
 * revision, limit 1, in one linearizable read: the oldest key, the holder by the queue's own rule.
 * Its value is the holder (none if it is no holder text), its create revision the fencing token, and
 * a second request, {@code LeaseTimeToLive} of the key's lease, gives {@code expiresIn}: the seconds
 * etcd still keeps the key if its holder goes silent, rounded down (zero if the lease ended between the
 * two reads). {@code waiters} counts the queue's keys ({@code <lease id>-<sequence>} after the prefix)
 * other than the oldest, read by name in the same read-only transaction as the oldest key (not keys of
 * a nested namespace under the prefix): each a contender still queued, since a waiter that gives up
 * deletes its key at once (one that gave up while etcd was unreachable, or whose process died, is
 * counted until its resent delete or its lease's expiry removes the key). Both reads together are
 * bounded by {@code timeout}; they write nothing, so inspecting a name nobody holds leaves no key and no
 * lease. The oldest key may be a waiter whose client has not yet learnt that its predecessor went: by
 * etcd's record it holds, and its client knows a round trip later.
 *
 * <p>Admin ({@code EtcdAdmin}): {@code forceRelease} reads the grant as {@code inspect} does, its
 * waiters too, and deletes exactly that key in a transaction guarded by its create revision (one Raft
 * commit), leaving the holder's lease, which carries its client's other locks, alone; the first waiter,
 * watching that key, is granted at once with a higher token, and the holder learns the loss at its next
 * keepalives
 * ({@code EtcdGrantCheck}: with each keepalive, one read-only transaction checks the keys of the plain
 * locks a client has held for a renewal period or longer, so an uncontended lock+unlock still costs two
 * RPCs, and the loss is learnt within two renewal periods, two thirds of the lease). {@code list} is a
 * keys-only range read under {@code <namespace><escaped prefix>} at one revision, in pages: each lock
 * with a key holds (its oldest key is the holder's) and is listed once; semaphore, read-write and
 * schedule slot keys are not lock keys. Keys sort by escaped bytes, not by the names' order, so the
 * whole prefix is read for any page. Neither writes anything for a name nobody holds.
 *
 * <p>Scheduled jobs: the {@code atLeast} bound of a request is handed to etcd's own expiry when the
 * task ends early: the holder's key (its value, the holder, kept) is bound to a lease of its own,
 * never kept alive, whose TTL covers the rest of {@code atLeast} (rounded up to whole seconds), so the
 * lock stays taken until then, and {@code inspect} names its holder, even if the holder's process
 * exits, and goes at most a second and etcd's expiry check (500 ms) later. The last completed schedule
 * slot is the key {@code <namespace><escaped name>.slot} beside the lock's queue, written in a
 * transaction that requires the holder's key to still have the grant's create revision (the fencing
 * token) and the slot key not to have been written since the grant began.
 *
 * <p>Semaphores: a permit of semaphore {@code name} is a slot key
 * {@code <namespace>%semaphores/<escaped name>/<slot>}, {@code slot} from 0 to {@code permits - 1},
 * created only if absent and bound to the client's one etcd lease, like a lock's key; the fencing token
 * is its create revision, so tokens grow per slot (every grant creates the key anew; etcd never reuses a
 * revision). No lock name maps under {@code <namespace>%semaphores/}: escaped names hold '%' only as
 * {@code %25} or {@code %2F}, so a lock and a semaphore of one name are independent. Slots rather than
 * a queue of waiters whose first {@code N} by create revision hold: a slot gives each permit its identity
 * and its own token at once, at most {@code N} holders follow from create-if-absent alone, and an
 * uncontended acquire+release is two RPCs and two Raft commits, as a lock's. The price: waiters are not
 * queued, so a release wakes every waiter of the semaphore (a watch of its prefix from the revision of
 * their last read), each tries the freed slot with one transaction, and the first to reach etcd wins;
 * there is no first come, first served among semaphore waiters. Each slot key's value is
 * {@code "<permits> <grant id> <holder>"}: the number of permits is checked against every slot key the
 * taking transaction reads, so another number is refused, naming both, whenever a permit is held; the
 * grant id, unique to the put, guards the delete of a key whose put had an unknown outcome (the whole
 * value is compared); the holder text, made on the acquiring thread for each put as a lock key's value
 * is, rides in the transaction that takes the slot and costs no request. A key written by an older
 * Latchkey ({@code "<permits> <grant id>"}) is read alike, with no holder. Once no permit is held, no key
 * of the semaphore remains. See {@code EtcdSemaphores}.
 *
 * <p>A semaphore's {@code inspect} ({@code EtcdPermitInspection}) reads the semaphore's prefix in one
 * linearizable range read: each slot key {@code <prefix><slot>} below {@code permits} is a held slot, its
 * holder the holder text of its value (none for an older key), its token its create revision, exactly the
 * {@code fencingToken()} its holder was given, and {@code expiresIn} the remaining TTL of the lease it is
 * bound to, from {@code LeaseTimeToLive} (one request per holding client, whose permits share its lease,
 * sent together), whole seconds rounded down, zero if the lease ended between the reads. {@code since} is
 * not given (etcd keeps no time of a key): the shared layer takes the holder text's {@code at=}, the
 * moment of the put that took the slot by the holder's clock. A slot key of another number of permits is
 * refused as the taking transaction refuses it. All reads together are bounded by {@code timeout}; they
 * write nothing and leave no watch, so inspecting a semaphore nobody uses leaves no key and no lease.
 *
 * <p>Read-write locks: read-write lock {@code name} is the keys under
 * {@code <namespace>%rw/<escaped name>/}, a reader's under {@code r/} and a writer's under {@code w/},
 * each put only if absent and bound to the client's one etcd lease, like a lock's key; no lock or
 * semaphore name maps under {@code <namespace>%rw/}, so the three kinds of one name are independent.
 * Readers and writers are one queue ordered by create revision, as etcd's own lock recipe orders its
 * waiters: a writer holds once no key of the name with a lower create revision is left, a reader once no
 * writer's key with a lower create revision is left, and each waiter watches only the key that blocks
 * it (the nearest earlier key for a writer, the nearest earlier writer's key for a reader), so a
 * release wakes no herd. Writers first follows from the order: a reader that asks while a writer waits
 * queues behind it. The fencing token is the key's create revision, one cluster-wide sequence, so a
 * write's token is above every earlier grant's and a read's above every earlier write's. An uncontended
 * read or write costs what a lock costs, two RPCs and two Raft commits; renewal, loss, crash release and
 * cleanup are the lock's. Read and write grants record no schedule slots: the slot key beside a lock's
 * queue belongs to the lock of that name. See {@code EtcdReadWrite}.
 *
 * <p>A read-write lock's {@code inspect} ({@code EtcdReadWriteInspection}) reads the name's prefix in one
 * linearizable range read sorted by create revision, and decides who holds by the queue's own rule, the one
 * that grants: a writer's key holds if no key of the name is older, a reader's key if no key under {@code w/}
 * is older. So a writer queued behind readers is not listed, nor a reader queued behind a waiting writer; a
 * waiter whose blocker just went is listed a round trip before its client reports the grant, as a lock's. The
 * reader and writer keys already carry the holder text (written by the queueing transaction, at no cost), so
 * each held key gives its value as the holder (a value that is no holder text, the lock name an older
 * Latchkey wrote, an unknown holder), its create revision as the token, exactly its lease's
 * {@code fencingToken()}, and the TTL left of its etcd lease as {@code expiresIn}, from {@code LeaseTimeToLive}
 * (one request per holding client, sent together, as a semaphore's inspect); readers oldest first. No
 * {@code since}: the shared layer takes the holder text's {@code at=}. All reads together are bounded by
 * {@code timeout}; they write nothing and leave no watch, so inspecting a read-write lock nobody uses leaves
 * no key and no lease.
 *
 * <p><b>Connect and a cold JVM</b> (contract rule 2, {@link io.latchkey.spi.Startup}): {@code timeout}
 * is etcd's. Connect first sends HTTP/2's connection preface with the JDK's own sockets to each endpoint
 * in turn and waits for any answer within {@code timeout} (etcd's gRPC server answers with its settings,
 * a TLS listener closes the connection); then jetcd reads the namespace and grants the client's lease
 * within the rest of it, plus a start-up allowance of 15 s while jetcd has never connected in this JVM
 * (gRPC, Netty and Vert.x load and start meanwhile). A client on the application's own jetcd client
 * has no probe; its requests get the same bound.
 */
package io.latchkey.etcd;
