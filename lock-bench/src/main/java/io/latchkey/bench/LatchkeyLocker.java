package io.latchkey.bench;

import io.latchkey.Lease;
import io.latchkey.LockClient;
import java.time.Duration;
import java.util.Optional;

/** Latchkey through its public API only: {@code LockClient.connect(uri)}, {@code tryLock}, {@code close}. */
final class LatchkeyLocker implements Locker {

    private final LockClient client;

    LatchkeyLocker(Target target) {
        this.client = LockClient.connect(target.latchkeyUri());
    }

    @Override
    public Held acquire(String name, Duration wait) throws InterruptedException {
        Optional<Lease> lease = client.lock(name).tryLock(wait);
        return lease.<Held>map(l -> l::close).orElse(null);
    }

    @Override
    public Held acquireMode(String name, boolean write, Duration wait) throws InterruptedException {
        var rw = client.readWriteLock(name);
        Optional<Lease> lease = (write ? rw.writeLock() : rw.readLock()).tryLock(wait);
        return lease.<Held>map(l -> l::close).orElse(null);
    }

    @Override
    public void close() {
        client.close();
    }
}
