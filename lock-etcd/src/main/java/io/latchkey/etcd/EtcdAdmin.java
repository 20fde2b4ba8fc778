package io.latchkey.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.OptionsUtil;
import io.latchkey.LockException;
import io.latchkey.spi.Durations;
import io.latchkey.spi.GrantRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * An operator's tools on etcd, for {@link EtcdLockBackend#forceRelease} and {@link EtcdLockBackend#list}.
 * Stateless; thread-safe.
 *
 * <p>Force release reads the grant as {@link EtcdInspection} does (the oldest key of the lock's queue
 * and, in the same read, the queue's keys behind it, then its lease's TTL), returns it with those
 * waiters, and deletes exactly that key in a transaction guarded by its create revision, the grant's
 * fencing token: one Raft commit, and never a key of another grant. The holder's lease is
 * left alone, since it carries the holder client's other locks too; the holder learns the loss from
 * {@link EtcdGrantCheck} at its next keepalives. A waiter watches the deletion of the key before its
 * own, so the first one is granted at once, with its own key's create revision, higher than the
 * ended grant's. If the key went on its own between the read and the delete (a release, an expiry),
 * the same transaction reads the new oldest key (and its waiters) instead, and that grant, the current
 * one now, is ended the same way; a free lock ends the call. Nothing is written for a name nobody holds.
 *
 * <p>List is a range read of the keys (names only, sorted by key) under
 * {@code <namespace><escaped prefix>} at one revision, in pages of {@value #PAGE} keys, each page
 * bounded by the {@code timeout} option: a lock is held exactly while a key of its queue exists (its
 * oldest key is the holder's), so every lock key {@code <namespace><escaped name>/<lease id>-<sequence>}
 * names a held lock, once however many waiters queue behind it; a page that ends inside a queue
 * continues after it. Semaphore keys ({@code %semaphores/}), read-write lock keys ({@code %rw/}) and
 * schedule slot keys ({@code <escaped name>.slot}, no '/') do not have that form and are not listed.
 * Keys sort by the bytes of the escaped names, not by {@link String#compareTo} of the names ('/' is
 * escaped as {@code %2F}, and the '/' after a name sorts after '.'), so every key under the prefix is
 * read, whatever {@code after} and {@code limit} are, and only the first {@code limit} names after
 * {@code after} in the names' order are kept.
 */
final class EtcdAdmin {

    /** The most keys one list request reads: small answers, however long the names (255 characters at most). */
    static final int PAGE = 1000;
    /** What follows a lock key's last '/': {@code <lease id>-<sequence>}, or {@code <lease id>} from older versions. */
    static final Pattern QUEUED = Pattern.compile("[0-9a-f]+(-[0-9a-f]+)?");

    private EtcdAdmin() {
    }

    static Optional<GrantRecord> forceRelease(EtcdLockBackend backend, String lockName) throws InterruptedException {
        long start = System.nanoTime();
        EtcdInspection.Head head = EtcdInspection.oldest(backend, lockName);
        for (int tries = 1; head != null; tries++) {
            KeyValue oldest = head.key();
            GrantRecord grant = EtcdInspection.record(backend, lockName, head, start);
            String key = oldest.getKey().toString(StandardCharsets.UTF_8);
            Duration rest = EtcdInspection.rest(backend, start);
            if (tries > 1 && rest.isZero()) {
                throw new LockException(lockName, backend.subject(lockName) + "the grant changed hands " + tries
                        + " times within the timeout of " + Durations.format(backend.timeout()) + " while it was being"
                        + " force-released (last holder key '" + key + "', token " + grant.token() + "); try again");
            }
            TxnResponse r = backend.call(lockName, backend.subject(lockName), "deleting key '" + key + "' of the grant"
                    + " with token " + grant.token(), backend.client().getKVClient().txn()
                    .If(new Cmp(oldest.getKey(), Cmp.Op.EQUAL, CmpTarget.createRevision(oldest.getCreateRevision())))
                    .Then(Op.delete(oldest.getKey(), DeleteOption.DEFAULT))
                    .Else(EtcdInspection.readHead(backend, lockName))
                    .commit(), rest);
            if (r.isSucceeded()) {
                return Optional.of(grant);
            }
            head = EtcdInspection.head(backend, lockName, r.getGetResponses());
        }
        return Optional.empty();
    }

    static List<String> list(EtcdLockBackend backend, String namespace, String prefix, String after, int limit)
            throws InterruptedException {
        String queue = EtcdLockBackend.prefix(namespace, prefix);
        String from = queue.substring(0, queue.length() - 1); // the escaped prefix, without the '/' that ends a name
        ByteSequence end = OptionsUtil.prefixEndOf(EtcdLockBackend.bytes(from));
        String subject = "listing the locks under prefix '" + prefix + "' (etcd keys under '" + from + "'): ";
        TreeSet<String> first = new TreeSet<>(); // the first `limit` names after `after`
        ByteSequence next = EtcdLockBackend.bytes(from);
        long revision = 0;
        while (true) {
            GetOption.Builder page = GetOption.builder().withRange(end).withKeysOnly(true)
                    .withSortField(GetOption.SortTarget.KEY).withSortOrder(GetOption.SortOrder.ASCEND).withLimit(PAGE);
            if (revision != 0) {
                page.withRevision(revision); // every page at the first one's revision: one snapshot
            }
            GetResponse r = backend.call(null, subject, "reading keys from '" + next.toString(StandardCharsets.UTF_8)
                    + "'", backend.client().getKVClient().get(next, page.build()));
            if (revision == 0) {
                revision = r.getHeader().getRevision();
            }
            String last = null;
            for (KeyValue kv : r.getKvs()) {
                last = kv.getKey().toString(StandardCharsets.UTF_8);
                String name = lockOf(last.substring(namespace.length()));
                if (name != null && (after == null || name.compareTo(after) > 0) && first.add(name)
                        && first.size() > limit) {
                    first.pollLast();
                }
            }
            if (!r.isMore() || last == null) {
                return new ArrayList<>(first);
            }
            next = after(namespace, last);
            if (compare(next, end) >= 0) {
                return new ArrayList<>(first);
            }
        }
    }

    /**
     * The lock name of key {@code <namespace>rest} if it is a lock's queued key: {@code rest} is an
     * escaped name, '/', and a lease id with its sequence; null if it is not.
     */
    static String lockOf(String rest) {
        int slash = rest.indexOf('/');
        if (slash < 0 || !QUEUED.matcher(rest.substring(slash + 1)).matches()) {
            return null;
        }
        return unescape(rest.substring(0, slash));
    }

    /**
     * Where the next page starts after key {@code last}: past the whole queue {@code <namespace><name>/}
     * it is in, since one key named the lock already (or, for {@code %semaphores/} and {@code %rw/}, no
     * key in it names a lock); just past {@code last} otherwise.
     */
    private static ByteSequence after(String namespace, String last) {
        String rest = last.substring(namespace.length());
        int slash = rest.indexOf('/');
        if (slash > 0 && (lockOf(rest) != null || unescape(rest.substring(0, slash)) == null)) {
            return OptionsUtil.prefixEndOf(EtcdLockBackend.bytes(last.substring(0, namespace.length() + slash + 1)));
        }
        return EtcdLockBackend.bytes(last + '\0');
    }

    /** The name escaped as {@link EtcdLockBackend#prefix} escapes it; null if {@code escaped} is no escaped name. */
    static String unescape(String escaped) {
        if (escaped.isEmpty()) {
            return null;
        }
        StringBuilder b = new StringBuilder(escaped.length());
        for (int i = 0; i < escaped.length(); i++) {
            char c = escaped.charAt(i);
            if (c != '%') {
                b.append(c);
            } else if (escaped.startsWith("%25", i)) {
                b.append('%');
                i += 2;
            } else if (escaped.startsWith("%2F", i)) {
                b.append('/');
                i += 2;
            } else {
                return null; // '%semaphores', '%rw': not a lock
            }
        }
        return b.toString();
    }

    /** Compares keys as etcd orders them: by unsigned bytes. */
    private static int compare(ByteSequence a, ByteSequence b) {
        byte[] x = a.getBytes();
        byte[] y = b.getBytes();
        for (int i = 0; i < Math.min(x.length, y.length); i++) {
            int d = Byte.toUnsignedInt(x[i]) - Byte.toUnsignedInt(y[i]);
            if (d != 0) {
                return d;
            }
        }
        return x.length - y.length;
    }
}
