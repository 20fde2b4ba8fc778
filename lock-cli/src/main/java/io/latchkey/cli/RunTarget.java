package io.latchkey.cli;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import io.latchkey.LockLostException;
import io.latchkey.MultiLease;
import io.latchkey.SemaphoreLease;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.stream.Collectors;

/**
 * What one {@code latchkey run} holds: the lock of one name, one permit of a semaphore
 * ({@code --permits} above one), the read or the write lock of a read-write lock ({@code --read},
 * {@code --write}), or the locks of several names at once (a multi-lock: every name given before the
 * {@code --}). It takes it, names it in messages and describes it to the command's environment.
 * Immutable.
 *
 * <p>Several names are taken all or none, in one global order, so that runs naming them in different
 * orders never deadlock; each name keeps its own fencing token, so the command gets
 * {@code LATCHKEY_LOCKS} (how many) and, for each name in the order taken, {@code LATCHKEY_LOCK_<i>}
 * and {@code LATCHKEY_FENCING_TOKEN_<i>} from 1, instead of {@code LATCHKEY_LOCK} and
 * {@code LATCHKEY_FENCING_TOKEN}: no single token fences several resources. {@code --permits} takes one
 * name, and so do {@code --read} and {@code --write}, whose command also gets {@code LATCHKEY_LOCK_MODE}
 * ({@code read} or {@code write}). A read-write lock is apart from the lock of the same name, so the
 * runs that share a name must agree on taking it as a read-write lock.
 */
record RunTarget(List<String> names, int permits, Mode mode) {

    /** The lock, or a mode of the read-write lock of the name. */
    enum Mode {
        LOCK, READ, WRITE
    }

    RunTarget {
        names = List.copyOf(names);
    }

    RunTarget(List<String> names, int permits) {
        this(names, permits, Mode.LOCK);
    }

    private String option() {
        return mode == Mode.READ ? "--read" : "--write";
    }

    boolean isMulti() {
        return names.size() > 1;
    }

    /** {@code lock 'a'}, {@code semaphore 'a'} or {@code locks 'a', 'b'}: what messages speak of. */
    String subject() {
        if (mode != Mode.LOCK) {
            return (mode == Mode.READ ? "read lock '" : "write lock '") + names.get(0) + "'";
        }
        if (isMulti()) {
            return "locks " + names.stream().map(n -> "'" + n + "'").collect(Collectors.joining(", "));
        }
        return (permits == 1 ? "lock '" : "semaphore '") + names.get(0) + "'";
    }

    /**
     * Checks the names and permits without a backend.
     *
     * @throws IllegalArgumentException naming the rule broken, and {@code --permits} where it is the cause
     */
    void check() {
        if (mode != Mode.LOCK && (isMulti() || permits != 1)) {
            throw new IllegalArgumentException(option() + " takes the read-write lock of one name, without --permits,"
                    + " and got " + (isMulti() ? names.size() + " names " + names : "--permits " + permits)
                    + "; give one name, or leave out " + option() + " for a lock or a semaphore");
        }
        if (isMulti() && permits != 1) {
            throw new IllegalArgumentException("--permits " + permits + " takes one semaphore name, and " + names.size()
                    + " were given (" + subject().substring("locks ".length()) + "); to hold several locks at once,"
                    + " run without --permits");
        }
        try {
            if (permits != 1) {
                LockClient.checkSemaphore(names.get(0), permits);
            } else if (isMulti()) {
                LockClient.checkMultiLock(names);
            } else {
                LockClient.checkName(names.get(0));
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + (permits == 1 ? "" : " (--permits)"), e);
        }
    }

    /** Takes it within {@code wait}; empty if someone else held it (one of the names, every permit) until then. */
    Optional<Lease> acquire(LockClient client, Duration wait) throws InterruptedException {
        if (mode != Mode.LOCK) {
            var rw = client.readWriteLock(names.get(0));
            return (mode == Mode.READ ? rw.readLock() : rw.writeLock()).tryLock(wait);
        }
        if (isMulti()) {
            return client.multiLock(names).tryLock(wait).map(Joint::new);
        }
        return permits == 1 ? client.lock(names.get(0)).tryLock(wait)
                : client.semaphore(names.get(0), permits).tryAcquire(wait).map(Lease.class::cast);
    }

    /** Why a run gave up: who holds what. */
    String heldByOthers() {
        if (mode == Mode.READ) {
            return subject() + " is held back by a writer, holding or waiting";
        }
        if (mode == Mode.WRITE) {
            return subject() + " is held by others, readers or a writer";
        }
        if (isMulti()) {
            return "one of the " + subject() + " is held by someone else";
        }
        return permits == 1 ? subject() + " is held by someone else"
                : "all " + permits + " permits of " + subject() + " are held by others";
    }

    /** What {@code --verbose} says once it is held. */
    String acquired(Lease lease) {
        if (lease instanceof Joint joint) {
            return subject() + " with fencing tokens " + joint.multi.leases().stream()
                    .map(l -> Long.toString(l.fencingToken())).collect(Collectors.joining(", "));
        }
        return (lease instanceof SemaphoreLease permit ? "slot " + permit.slot() + " of " : "") + subject()
                + " with fencing token " + lease.fencingToken();
    }

    /** The usage error for a backend that does not offer what {@code --permits} or {@code --read}/{@code --write} asks for. */
    String unsupported(String why) {
        if (mode != Mode.LOCK) {
            return option() + " for '" + names.get(0) + "' needs a backend with read-write locks: " + why;
        }
        return "--permits " + permits + " for '" + names.get(0) + "' needs a backend with semaphores: " + why
                + "; run without --permits for a lock";
    }

    /** Puts the names and tokens of {@code lease} into the command's environment. */
    void describe(Lease lease, Map<String, String> env) {
        if (lease instanceof Joint joint) {
            List<Lease> leases = joint.multi.leases();
            env.put("LATCHKEY_LOCKS", Integer.toString(leases.size()));
            for (int i = 0; i < leases.size(); i++) {
                env.put("LATCHKEY_LOCK_" + (i + 1), leases.get(i).lockName());
                env.put("LATCHKEY_FENCING_TOKEN_" + (i + 1), Long.toString(leases.get(i).fencingToken()));
            }
            return;
        }
        env.put("LATCHKEY_LOCK", names.get(0));
        env.put("LATCHKEY_FENCING_TOKEN", Long.toString(lease.fencingToken()));
        if (mode != Mode.LOCK) {
            env.put("LATCHKEY_LOCK_MODE", mode == Mode.READ ? "read" : "write");
        }
        if (lease instanceof SemaphoreLease permit) {
            env.put("LATCHKEY_PERMITS", Integer.toString(permit.permits()));
            env.put("LATCHKEY_PERMIT_SLOT", Integer.toString(permit.slot()));
        }
    }

    /**
     * A multi-lease as the one lease a run guards: valid while every lock is, lost with the first loss,
     * closed all at once. It has no single name or token; {@link #describe} hands out each lock's own.
     */
    private record Joint(MultiLease multi) implements Lease {

        @Override
        public String lockName() {
            return multi.leases().stream().map(Lease::lockName).collect(Collectors.joining(", "));
        }

        @Override
        public long fencingToken() {
            throw new UnsupportedOperationException("locks " + lockName() + " have a fencing token each");
        }

        @Override
        public boolean isValid() {
            return multi.isValid();
        }

        @Override
        public void ensureValid() {
            multi.ensureValid();
        }

        @Override
        public Duration remaining() {
            return multi.remaining();
        }

        @Override
        public CompletionStage<LockLostException> lost() {
            return multi.lost();
        }

        @Override
        public void close() {
            multi.close();
        }
    }
}
