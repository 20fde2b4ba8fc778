package io.latchkey.etcd;

import io.etcd.jetcd.ByteSequence;
import io.latchkey.spi.Deadline;
import io.latchkey.spi.LeaseEvidence;
import io.latchkey.spi.ReadWriteRecords;

/**
 * The read-write locks of one {@link EtcdLockBackend}, on the lock's own queue ({@link EtcdQueue}) and
 * sessions: read-write lock {@code name} is the keys under {@code <namespace>%rw/<escaped name>/}, a
 * reader's {@code r/<lease id>-<sequence>} and a writer's {@code w/<lease id>-<sequence>}, each put
 * only if absent and bound to the client's one etcd lease ({@link EtcdSession}) as a lock's key is.
 *
 * <p>Every key of the name, either mode, is ordered by its create revision, as etcd's own lock recipe
 * orders its waiters. A writer holds once no key of the name with a lower create revision is left; a
 * reader once no writer's key with a lower create revision is left. Each waiter watches only the key
 * that blocks it, the nearest earlier key for a writer and the nearest earlier writer's key for a
 * reader (the writers' keys have a prefix of their own, so that one ranged read finds it), and reads
 * again only when that key is deleted: a release wakes the waiters it blocked and no others. Writers
 * first follows from the order: a reader that asks while a writer waits has a higher create revision
 * than the writer's key and waits behind it, however many readers hold.
 *
 * <p>The fencing token is the key's create revision. Revisions are one counter of the whole etcd
 * cluster, never reused (not after a restart, nor after keys expire), so they are one strictly
 * increasing sequence for both modes by construction: a writer is granted only once every key created
 * before its own is gone, so every grant before it had a lower revision; a reader only once every
 * writer's key created before its own is gone, so every write granted before it had a lower revision.
 * A reader's token may be below an earlier reader's (readers do not order each other), which the
 * contract allows.
 *
 * <p>Costs are the lock's: an uncontended read or write is one transaction that puts the key and
 * reads the nearest blocker (one RPC, one Raft commit) and one that deletes the key (one RPC, one Raft
 * commit). Renewal, loss, crash release within the lease, bounded calls, the check of etcd issue 11456
 * and the removal of an abandoned waiter's key are the lock's too: a grant is an {@link EtcdLease}.
 *
 * <p>No lock or semaphore key ever begins with {@code <namespace>%rw/}: an escaped name holds '%' only
 * as {@code %25} or {@code %2F} (see {@link EtcdLockBackend#semaphorePrefix}), so a lock, a semaphore
 * and a read-write lock of one name are independent; escaped names hold no '/', so no name's prefix
 * lies inside another's. Once no grant is held or asked for, no key of the name remains.
 *
 * <p>Thread-safe, and stateless apart from its backend: the shared layer may ask for several reads of
 * one name from one client at once, and each is a key of its own.
 */
final class EtcdReadWrite {

    /** The segment after the namespace under which every read-write lock lives. */
    static final String READ_WRITE = "%rw/";
    /** The segment after a read-write lock's prefix under which its readers' keys live. */
    static final String READERS = "r/";
    /** The segment after a read-write lock's prefix under which its writers' keys live. */
    static final String WRITERS = "w/";

    private final EtcdLockBackend backend;
    private final EtcdQueue queue;
    private final String namespace;

    EtcdReadWrite(EtcdLockBackend backend, EtcdQueue queue, String namespace) {
        this.backend = backend;
        this.queue = queue;
        this.namespace = namespace;
    }

    /** The key prefix of read-write lock {@code name}: {@code namespace}, {@value #READ_WRITE}, the escaped name and '/'. */
    static String prefix(String namespace, String name) {
        return EtcdLockBackend.prefix(namespace + READ_WRITE, name);
    }

    String describe(String name) {
        return "etcd key prefix '" + prefix(namespace, name) + "'";
    }

    /**
     * The held grants of read-write lock {@code name}, see {@link EtcdReadWriteInspection}; messages begin
     * with {@code "read-write lock 'name' (etcd key prefix '...'): "}.
     */
    ReadWriteRecords inspect(String name) throws InterruptedException {
        return EtcdReadWriteInspection.read(backend, name, prefix(namespace, name),
                "read-write lock '" + name + "' (" + describe(name) + "): ");
    }

    /** {@code "read lock 'name' (etcd key prefix '...'): "}: messages about one mode name it first. */
    String subject(String name, boolean write) {
        return (write ? "write" : "read") + " lock '" + name + "' (" + describe(name) + "): ";
    }

    /**
     * One attempt on the client's current session: puts the reader's or writer's key and waits until
     * {@code deadline} for the key that blocks it to go.
     *
     * @return the grant, or null if the deadline passed while waiting
     */
    EtcdLease attempt(String name, boolean write, Deadline deadline, LeaseEvidence evidence) throws InterruptedException {
        String prefix = prefix(namespace, name);
        EtcdSession session = backend.session(name, subject(name, write));
        ByteSequence key = session.newKey(prefix + (write ? WRITERS : READERS));
        return queue.take(new Grant(backend, name, write, key, session, write ? prefix : prefix + WRITERS,
                backend.holderText()), deadline, evidence);
    }

    /**
     * A reader's or writer's key: renewed, lost and released as a lock's key. It records no schedule
     * slots, since the lock's slot key belongs to the lock of the same name, which is independent.
     */
    private final class Grant extends EtcdLease {

        private final boolean write;
        private final String blockers;

        Grant(EtcdLockBackend backend, String name, boolean write, ByteSequence key, EtcdSession session,
                String blockers, String holder) {
            super(backend, name, key, session, holder);
            this.write = write;
            this.blockers = blockers;
        }

        /** A writer's blockers are every key of the name, a reader's only the writers' keys. */
        @Override
        String blockers() {
            return blockers;
        }

        @Override
        String subject() {
            return EtcdReadWrite.this.subject(lockName, write);
        }

        @Override
        public boolean recordsSlots() {
            return false;
        }

        /** Only its holder, its lease or a hand ends it: no client ends a read or write grant through Latchkey. */
        @Override
        boolean checkedAtRenewal() {
            return false;
        }

        @Override
        public String toString() {
            return "EtcdReadWrite.Grant{" + (write ? "write" : "read") + " lock='" + lockName + "', key='" + keyString()
                    + "', token=" + fencingToken() + '}';
        }
    }
}
