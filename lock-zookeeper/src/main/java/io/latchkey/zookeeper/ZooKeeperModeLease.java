package io.latchkey.zookeeper;

import io.latchkey.spi.LeaseEvidence;

/**
 * A held read or write grant of a read-write lock: a lock's lease on a node under
 * {@code <base>/@rw/<name>}, named as such in messages. Schedule slots are a lock's alone. Thread-safe.
 */
final class ZooKeeperModeLease extends ZooKeeperLease {

    private final ZooKeeperBackend backend;
    private final String noun;

    ZooKeeperModeLease(ZooKeeperBackend backend, String name, String noun, String node, long czxid, long sessionId,
            LeaseEvidence evidence) {
        super(backend, name, node, czxid, sessionId, evidence);
        this.backend = backend;
        this.noun = noun;
    }

    @Override
    String subject() {
        return noun + " '" + lockName() + "'";
    }

    @Override
    String where() {
        return backend.describeReadWrite(lockName());
    }

    @Override
    public boolean recordsSlots() {
        return false;
    }
}
