package io.latchkey.testkit;

/**
 * The cluster capability for backends that replicate the lock by consensus: across the loss of the
 * leader, no two leases are valid at once and tokens keep increasing with grant order, on top of
 * what {@link ClusterFailoverContract} asserts. ZooKeeper and etcd subclass this.
 */
public abstract class LinearizableFailoverContract extends ClusterFailoverContract {

    @Override
    final boolean linearizable() {
        return true;
    }
}
