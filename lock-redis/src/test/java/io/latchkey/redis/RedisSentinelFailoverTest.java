package io.latchkey.redis;

import io.latchkey.LockOptions;
import io.latchkey.testkit.ClusterFailoverContract;
import io.latchkey.testkit.redis.RedisSentinelCluster;
import java.time.Duration;

/**
 * Loss of the primary of a sentinel-managed primary and replica while a lock is held and contenders
 * wait. Replication is asynchronous, so this is the non-linearizable cluster contract: no stale write
 * accepted by the fenced resource, and the lock granted again after the failover.
 */
class RedisSentinelFailoverTest extends ClusterFailoverContract<RedisSentinelCluster> {

    RedisSentinelFailoverTest() {
        super(RedisSentinelCluster::start);
    }

    @Override
    protected void failLeader() {
        cluster().killPrimary();
    }

    /** The sentinels notice the silence, then have one failover attempt's time to promote the replica. */
    @Override
    protected Duration failoverTime() {
        return RedisSentinelCluster.DOWN_AFTER.plus(RedisSentinelCluster.FAILOVER_TIMEOUT);
    }

    /** The sentinels report addresses on the containers' network: the client maps them to the published ports. */
    @Override
    protected LockOptions options() {
        return super.options().toBuilder().backendOption(RedisConfigs.NAT_MAP, cluster().natMap()).build();
    }
}
