package io.latchkey.redis;

import io.latchkey.testkit.ClusterFailoverContract;
import io.latchkey.testkit.redis.RedisCluster;
import java.time.Duration;

/**
 * Loss of the primary that serves the lock's hash slot, on a Redis Cluster of three primaries with
 * one replica each, while the lock is held and contenders wait. Replication is asynchronous, as with
 * sentinels, so this is the non-linearizable cluster contract: no stale write accepted by the fenced
 * resource, and the lock granted again after the replica took over.
 */
class RedisClusterFailoverTest extends ClusterFailoverContract<RedisCluster> {

    RedisClusterFailoverTest() {
        super(RedisCluster::startWithFailover);
    }

    /** Kills (SIGKILL) the primary that holds the contract's lock key and its token counter. */
    @Override
    protected void failLeader() {
        cluster().killNode(cluster().primaryHolding("*contract:failover:*"));
    }

    /**
     * The replica takes over once its primary was silent for the node timeout and the other primaries
     * voted, which Redis bounds by another node timeout; the client learns of it at its next scan.
     */
    @Override
    protected Duration failoverTime() {
        return RedisCluster.FAILOVER_NODE_TIMEOUT.multipliedBy(2).plusMillis(RedisConfigs.CLUSTER_SCAN_MILLIS);
    }
}
