package io.latchkey.internal;

import io.latchkey.Candidacy;
import io.latchkey.DistributedLock;
import io.latchkey.Election;
import io.latchkey.ElectionListener;
import io.latchkey.Holder;
import io.latchkey.LockClient;
import java.util.Objects;
import java.util.Optional;

/**
 * An {@link Election} on any {@link LockClient}: its candidates campaign for the client's lock of the
 * election's name, so every backend has elections with the lock's guarantees; see {@link Campaign}.
 * A backend's native election (etcd's election keys, Curator's latch nodes) would be an optimisation
 * of this, not a different promise.
 */
record ElectionHandle(LockClient client, DistributedLock lock) implements Election {

    /** Checks the name and that the client is open, by taking the client's lock handle. */
    static ElectionHandle of(LockClient client, String name) {
        Objects.requireNonNull(client, "client");
        return new ElectionHandle(client, client.lock(name));
    }

    @Override
    public String name() {
        return lock.name();
    }

    @Override
    public Candidacy campaign(ElectionListener listener) {
        Objects.requireNonNull(listener, "listener");
        return Campaign.start(client.options(), lock, listener,
                client instanceof SharedLockClient shared ? shared : null);
    }

    @Override
    public Optional<Holder> leader() throws InterruptedException {
        return lock.inspect().holder();
    }

    @Override
    public String toString() {
        return "Election{" + name() + '}';
    }
}
