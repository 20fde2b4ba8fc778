package io.latchkey.testkit;

import java.util.function.Supplier;

/**
 * The cluster capability for backends that replicate the lock by consensus: across the loss of the
 * leader, no two leases are valid at once and tokens keep increasing with grant order, on top of
 * what {@link ClusterFailoverContract} asserts. ZooKeeper, etcd and Kafka subclass this.
 *
 * @param <S> the kind of cluster, as in {@link ClusterFailoverContract}
 */
public abstract class LinearizableFailoverContract<S extends LockServer> extends ClusterFailoverContract<S> {

    /** As {@link ClusterFailoverContract#ClusterFailoverContract(Supplier)}. */
    protected LinearizableFailoverContract(Supplier<? extends S> startCluster) {
        super(startCluster);
    }

    @Override
    final boolean linearizable() {
        return true;
    }
}
